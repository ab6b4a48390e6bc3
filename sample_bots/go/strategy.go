package main

// The bot's play: a pure function from a request's view and legal actions to one of those
// actions (returned as it came, the safest answer). No I/O, no clock, no randomness, so
// strategy_test.go can check it. A few rules of thumb, each a place to improve it (count the
// cards gone, double a seat you expect to beat, value the contracts still to declare):
//   - Declaring: Trumps in a suit of five cards or more, else the negative contract this hand
//     risks least in, else Domino from the rank it holds most of.
//   - Doubling: the least it may do (a pass, or the forced double of the declarer).
//   - Negative contracts: duck with the highest card that still loses the trick, shed the most
//     dangerous card when void, lead the lowest card.
//   - Trumps: win as cheaply as possible, else throw the lowest card; lead the highest.
//   - Domino: play a card rather than pass, first one whose neighbour in its suit is in hand
//     (it opens the way for our own next card).

import (
	"strings"

	"barbu/barbupb"
)

const ranks = "23456789TJQKA"

func rankOf(card string) int  { return strings.IndexByte(ranks, card[0]) }
func suitOf(card string) byte { return card[1] }
func isHigh(card string) bool { return rankOf(card) >= rankOf("J") }
func isPenalty(contract barbupb.Contract, card string) bool {
	switch contract {
	case barbupb.Contract_NO_HEARTS:
		return suitOf(card) == 'H'
	case barbupb.Contract_NO_QUEENS:
		return card[0] == 'Q'
	case barbupb.Contract_BARBU:
		return card == "KH"
	}
	return false
}

// Decide chooses one of legal (never empty) for the seat whose view this is.
func Decide(view *barbupb.View, legal []*barbupb.Action) *barbupb.Action {
	switch view.Phase {
	case barbupb.Phase_DECLARE:
		return declare(view.Hand, legal)
	case barbupb.Phase_PLAY:
		if play := trickPlay(view, legal); play != nil {
			return play
		}
	case barbupb.Phase_DOMINO_PLAY:
		return dominoPlay(view.Hand, legal)
	}
	return legal[0] // doubling, and anything this strategy does not know: the first legal action
}

// negativeRisk is how badly a hand suits a negative contract (lower is better).
func negativeRisk(contract barbupb.Contract, hand []string) int {
	risk := 0
	for _, card := range hand {
		switch {
		case isPenalty(contract, card):
			risk += 1 + rankOf(card)/4
		case contract == barbupb.Contract_NO_TRICKS || contract == barbupb.Contract_NO_LAST_TWO:
			if isHigh(card) {
				risk++
			}
		}
	}
	return risk
}

func declare(hand []string, legal []*barbupb.Action) *barbupb.Action {
	suitLength := map[string]int{}
	rankCount := map[string]int{}
	for _, card := range hand {
		suitLength[string(suitOf(card))]++
		rankCount[card[:1]]++
	}
	var best, trumps, domino *barbupb.Action
	bestRisk := 1 << 30
	for _, action := range legal {
		d := action.GetDeclare()
		switch d.GetContract() {
		case barbupb.Contract_TRUMPS:
			if trumps == nil || suitLength[d.Trump] > suitLength[trumps.GetDeclare().Trump] {
				trumps = action
			}
		case barbupb.Contract_DOMINO:
			if domino == nil || rankCount[d.StartRank] > rankCount[domino.GetDeclare().StartRank] {
				domino = action
			}
		default:
			if risk := negativeRisk(d.GetContract(), hand); risk < bestRisk {
				best, bestRisk = action, risk
			}
		}
	}
	switch {
	case trumps != nil && suitLength[trumps.GetDeclare().Trump] >= 5:
		return trumps
	case best != nil:
		return best
	case domino != nil:
		return domino
	case trumps != nil:
		return trumps
	}
	return legal[0]
}

// winning is the card that wins the trick so far.
func winning(trick []string, trump byte) string {
	best := trick[0]
	for _, card := range trick[1:] {
		if suitOf(card) == suitOf(best) && rankOf(card) > rankOf(best) || suitOf(card) == trump && suitOf(best) != trump {
			best = card
		}
	}
	return best
}

func beats(card, best string, trump byte) bool {
	if suitOf(card) == suitOf(best) {
		return rankOf(card) > rankOf(best)
	}
	return suitOf(card) == trump
}

// trickPlay picks a card in trick play; nil when legal holds something other than cards.
func trickPlay(view *barbupb.View, legal []*barbupb.Action) *barbupb.Action {
	contract := view.Declaration.GetContract()
	var trump byte
	if contract == barbupb.Contract_TRUMPS && view.Declaration.GetTrump() != "" {
		trump = view.Declaration.GetTrump()[0]
	}
	var lowest, highest, highestLoser, lowestWinner, worst *barbupb.Action
	for _, action := range legal {
		card := action.GetPlay().GetCard()
		if card == "" {
			return nil
		}
		r := rankOf(card)
		if lowest == nil || r < rankOf(lowest.GetPlay().Card) {
			lowest = action
		}
		if highest == nil || r > rankOf(highest.GetPlay().Card) {
			highest = action
		}
		if len(view.Trick) > 0 {
			if beats(card, winning(view.Trick, trump), trump) {
				if lowestWinner == nil || r < rankOf(lowestWinner.GetPlay().Card) {
					lowestWinner = action
				}
			} else if highestLoser == nil || r > rankOf(highestLoser.GetPlay().Card) {
				highestLoser = action
			}
		}
		// The card to shed first when void: a penalty card, the highest first.
		if worst == nil || dangerScore(contract, card) > dangerScore(contract, worst.GetPlay().Card) {
			worst = action
		}
	}
	following := len(view.Trick) > 0 && suitOf(legal[0].GetPlay().Card) == suitOf(view.Trick[0])
	switch {
	case contract == barbupb.Contract_TRUMPS && len(view.Trick) == 0:
		return highest
	case contract == barbupb.Contract_TRUMPS && lowestWinner != nil:
		return lowestWinner
	case contract == barbupb.Contract_TRUMPS:
		return lowest
	case len(view.Trick) == 0:
		return lowest
	case !following: // void in the suit led: nothing we play can win, shed the worst card
		return worst
	case highestLoser != nil:
		return highestLoser
	case len(view.Trick) == 3: // the trick is ours whatever we play: win it with the highest
		return highest
	}
	return lowest
}

func dangerScore(contract barbupb.Contract, card string) int {
	if isPenalty(contract, card) {
		return 100 + rankOf(card)
	}
	return rankOf(card)
}

func dominoPlay(hand []string, legal []*barbupb.Action) *barbupb.Action {
	held := map[string]bool{}
	for _, card := range hand {
		held[card] = true
	}
	opensOurs := func(card string) bool {
		r := rankOf(card)
		below, above := "", ""
		if r > 0 {
			below = ranks[r-1:r] + card[1:]
		}
		if r < len(ranks)-1 {
			above = ranks[r+1:r+2] + card[1:]
		}
		return held[below] || held[above]
	}
	var card *barbupb.Action
	for _, action := range legal {
		if c := action.GetPlay().GetCard(); c != "" {
			if opensOurs(c) {
				return action
			}
			if card == nil {
				card = action
			}
		}
	}
	if card == nil {
		return legal[0] // only the pass
	}
	return card
}
