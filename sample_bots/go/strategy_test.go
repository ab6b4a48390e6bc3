package main

import (
	"testing"

	"barbu/barbupb"
)

func cards(names ...string) []*barbupb.Action {
	legal := make([]*barbupb.Action, len(names))
	for i, name := range names {
		play := &barbupb.Play{Card: name, Pass: name == "pass"}
		if play.Pass {
			play.Card = ""
		}
		legal[i] = &barbupb.Action{Kind: &barbupb.Action_Play{Play: play}}
	}
	return legal
}

func declarations(contracts ...barbupb.Contract) []*barbupb.Action {
	var legal []*barbupb.Action
	for _, contract := range contracts {
		switch contract {
		case barbupb.Contract_TRUMPS:
			for _, suit := range []string{"C", "D", "H", "S"} {
				legal = append(legal, &barbupb.Action{Kind: &barbupb.Action_Declare{Declare: &barbupb.Declare{Contract: contract, Trump: suit}}})
			}
		case barbupb.Contract_DOMINO:
			for i := range ranks {
				legal = append(legal, &barbupb.Action{Kind: &barbupb.Action_Declare{Declare: &barbupb.Declare{Contract: contract, StartRank: ranks[i : i+1]}}})
			}
		default:
			legal = append(legal, &barbupb.Action{Kind: &barbupb.Action_Declare{Declare: &barbupb.Declare{Contract: contract}}})
		}
	}
	return legal
}

func playView(contract barbupb.Contract, trump string, trick ...string) *barbupb.View {
	return &barbupb.View{Phase: barbupb.Phase_PLAY, Declaration: &barbupb.Declare{Contract: contract, Trump: trump}, Trick: trick}
}

func card(t *testing.T, action *barbupb.Action, legal []*barbupb.Action) string {
	t.Helper()
	for _, offered := range legal {
		if offered == action {
			return action.GetPlay().GetCard()
		}
	}
	t.Fatalf("%v is not one of the legal actions offered", action)
	return ""
}

func TestDeclaresTrumpsInAFiveCardSuit(t *testing.T) {
	hand := []string{"2C", "3D", "4H", "5H", "9H", "JH", "AH", "2S", "3S", "4S", "5C", "6C", "7D"}
	legal := declarations(barbupb.Contract_NO_TRICKS, barbupb.Contract_TRUMPS, barbupb.Contract_DOMINO)
	d := Decide(&barbupb.View{Phase: barbupb.Phase_DECLARE, Hand: hand}, legal).GetDeclare()
	if d.Contract != barbupb.Contract_TRUMPS || d.Trump != "H" {
		t.Fatalf("declared %v, want trumps in hearts", d)
	}
}

func TestDeclaresTheNegativeContractItRisksLeast(t *testing.T) {
	hand := []string{"QC", "QD", "QH", "QS", "2C", "3C", "4D", "5D", "2S", "3S", "4C", "5S", "6D"}
	legal := declarations(barbupb.Contract_NO_QUEENS, barbupb.Contract_BARBU, barbupb.Contract_TRUMPS)
	d := Decide(&barbupb.View{Phase: barbupb.Phase_DECLARE, Hand: hand}, legal).GetDeclare()
	if d.Contract != barbupb.Contract_BARBU {
		t.Fatalf("declared %v with four queens, want barbu", d)
	}
}

func TestDucksWithTheHighestCardThatLoses(t *testing.T) {
	legal := cards("3H", "9H", "QH", "AH")
	if got := card(t, Decide(playView(barbupb.Contract_NO_TRICKS, "", "TH", "2C"), legal), legal); got != "9H" {
		t.Fatalf("played %s under the ten, want 9H", got)
	}
}

func TestShedsTheKingOfHeartsWhenVoidInBarbu(t *testing.T) {
	legal := cards("AC", "2H", "KH", "AS")
	if got := card(t, Decide(playView(barbupb.Contract_BARBU, "", "5D"), legal), legal); got != "KH" {
		t.Fatalf("shed %s, want KH", got)
	}
}

func TestWinsTrumpsTricksCheaply(t *testing.T) {
	legal := cards("2S", "9S", "KS") // void in clubs: ruff with the lowest trump
	if got := card(t, Decide(playView(barbupb.Contract_TRUMPS, "S", "AC", "3C"), legal), legal); got != "2S" {
		t.Fatalf("played %s, want the 2 of trumps", got)
	}
}

func TestDominoPlaysACardThatOpensItsOwnAndPassesOnlyWhenItMust(t *testing.T) {
	view := &barbupb.View{Phase: barbupb.Phase_DOMINO_PLAY, Hand: []string{"8C", "6D", "7D", "AS"}}
	legal := cards("8C", "6D", "pass")
	if got := card(t, Decide(view, legal), legal); got != "6D" {
		t.Fatalf("played %s, want 6D (the 7 of diamonds follows it)", got)
	}
	only := cards("pass")
	if !Decide(view, only).GetPlay().GetPass() {
		t.Fatal("did not pass with no card to play")
	}
}
