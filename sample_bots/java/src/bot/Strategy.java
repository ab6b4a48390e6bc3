package bot;

import barbu.v1.ArbiterOuterClass.Action;
import barbu.v1.ArbiterOuterClass.Contract;
import barbu.v1.ArbiterOuterClass.Declare;
import barbu.v1.ArbiterOuterClass.View;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The bot's play: a pure function from a request's view and legal actions to one of those
 * actions (returned as it came, the safest answer). No I/O, no clock, no randomness, so
 * StrategyTest can check it. The Go sample bot's rules of thumb, each a place to improve it
 * (count the cards gone, double a seat you expect to beat, value the contracts still to declare):
 *
 * <ul>
 *   <li>Declaring: Trumps in a suit of five cards or more, else the negative contract this hand
 *       risks least in, else Domino from the rank it holds most of.
 *   <li>Doubling: the least it may do (a pass, or the forced double of the declarer).
 *   <li>Negative contracts: duck with the highest card that still loses the trick, shed the most
 *       dangerous card when void, lead the lowest card.
 *   <li>Trumps: win as cheaply as possible, else throw the lowest card; lead the highest.
 *   <li>Domino: play a card rather than pass, first one whose neighbour in its suit is in hand
 *       (it opens the way for our own next card).
 * </ul>
 */
public final class Strategy {
  static final String RANKS = "23456789TJQKA";

  private Strategy() {}

  static int rank(String card) {
    return RANKS.indexOf(card.charAt(0));
  }

  static char suit(String card) {
    return card.charAt(1);
  }

  static boolean isPenalty(Contract contract, String card) {
    switch (contract) {
      case NO_HEARTS:
        return suit(card) == 'H';
      case NO_QUEENS:
        return card.charAt(0) == 'Q';
      case BARBU:
        return card.equals("KH");
      default:
        return false;
    }
  }

  /** One of {@code legal} (never empty) for the seat whose view this is. */
  public static Action decide(View view, List<Action> legal) {
    switch (view.getPhase()) {
      case DECLARE:
        return declare(view.getHandList(), legal);
      case PLAY:
        Action card = trickPlay(view, legal);
        if (card != null) {
          return card;
        }
        break;
      case DOMINO_PLAY:
        return dominoPlay(view.getHandList(), legal);
      default:
        break;
    }
    return legal.get(0); // doubling, and anything this strategy does not know: the first legal action
  }

  /** How badly a hand suits a negative contract (lower is better). */
  static int negativeRisk(Contract contract, List<String> hand) {
    int risk = 0;
    for (String card : hand) {
      if (isPenalty(contract, card)) {
        risk += 1 + rank(card) / 4;
      } else if ((contract == Contract.NO_TRICKS || contract == Contract.NO_LAST_TWO) && rank(card) >= rank("J")) {
        risk++;
      }
    }
    return risk;
  }

  static Action declare(List<String> hand, List<Action> legal) {
    Map<String, Integer> suitLength = new HashMap<>();
    Map<String, Integer> rankCount = new HashMap<>();
    for (String card : hand) {
      suitLength.merge(card.substring(1), 1, Integer::sum);
      rankCount.merge(card.substring(0, 1), 1, Integer::sum);
    }
    Action best = null;
    Action trumps = null;
    Action domino = null;
    int bestRisk = Integer.MAX_VALUE;
    for (Action action : legal) {
      Declare d = action.getDeclare();
      switch (d.getContract()) {
        case TRUMPS:
          if (trumps == null || suitLength.getOrDefault(d.getTrump(), 0) > suitLength.getOrDefault(trumps.getDeclare().getTrump(), 0)) {
            trumps = action;
          }
          break;
        case DOMINO:
          if (domino == null || rankCount.getOrDefault(d.getStartRank(), 0) > rankCount.getOrDefault(domino.getDeclare().getStartRank(), 0)) {
            domino = action;
          }
          break;
        default:
          int risk = negativeRisk(d.getContract(), hand);
          if (risk < bestRisk) {
            best = action;
            bestRisk = risk;
          }
      }
    }
    if (trumps != null && suitLength.getOrDefault(trumps.getDeclare().getTrump(), 0) >= 5) {
      return trumps;
    }
    for (Action choice : new Action[] {best, domino, trumps}) {
      if (choice != null) {
        return choice;
      }
    }
    return legal.get(0);
  }

  /** The card that wins the trick so far. */
  static String winning(List<String> trick, char trump) {
    String best = trick.get(0);
    for (String card : trick.subList(1, trick.size())) {
      if (beats(card, best, trump)) {
        best = card;
      }
    }
    return best;
  }

  static boolean beats(String card, String best, char trump) {
    if (suit(card) == suit(best)) {
      return rank(card) > rank(best);
    }
    return suit(card) == trump;
  }

  /** A card in trick play; null when legal holds something other than cards. */
  static Action trickPlay(View view, List<Action> legal) {
    Contract contract = view.getDeclaration().getContract();
    String trumpSuit = view.getDeclaration().getTrump();
    char trump = contract == Contract.TRUMPS && !trumpSuit.isEmpty() ? trumpSuit.charAt(0) : 0;
    List<String> trick = view.getTrickList();
    Action lowest = null;
    Action highest = null;
    Action highestLoser = null;
    Action lowestWinner = null;
    Action worst = null;
    for (Action action : legal) {
      String card = action.getPlay().getCard();
      if (card.isEmpty()) {
        return null;
      }
      int r = rank(card);
      if (lowest == null || r < rank(cardOf(lowest))) {
        lowest = action;
      }
      if (highest == null || r > rank(cardOf(highest))) {
        highest = action;
      }
      if (!trick.isEmpty()) {
        if (beats(card, winning(trick, trump), trump)) {
          if (lowestWinner == null || r < rank(cardOf(lowestWinner))) {
            lowestWinner = action;
          }
        } else if (highestLoser == null || r > rank(cardOf(highestLoser))) {
          highestLoser = action;
        }
      }
      // The card to shed first when void: a penalty card, the highest first.
      if (worst == null || danger(contract, card) > danger(contract, cardOf(worst))) {
        worst = action;
      }
    }
    boolean following = !trick.isEmpty() && suit(cardOf(legal.get(0))) == suit(trick.get(0));
    if (contract == Contract.TRUMPS) {
      if (trick.isEmpty()) {
        return highest;
      }
      return lowestWinner != null ? lowestWinner : lowest;
    }
    if (trick.isEmpty()) {
      return lowest;
    }
    if (!following) {
      return worst; // void in the suit led: nothing we play can win, shed the worst card
    }
    if (highestLoser != null) {
      return highestLoser;
    }
    return trick.size() == 3 ? highest : lowest; // last to play, the trick is ours anyway: shed the highest
  }

  static int danger(Contract contract, String card) {
    return isPenalty(contract, card) ? 100 + rank(card) : rank(card);
  }

  static Action dominoPlay(List<String> hand, List<Action> legal) {
    Set<String> held = new HashSet<>(hand);
    Action first = null;
    for (Action action : legal) {
      String card = action.getPlay().getCard();
      if (card.isEmpty()) {
        continue;
      }
      int r = rank(card);
      boolean opensOurs =
          r > 0 && held.contains(RANKS.charAt(r - 1) + card.substring(1))
              || r < RANKS.length() - 1 && held.contains(RANKS.charAt(r + 1) + card.substring(1));
      if (opensOurs) {
        return action;
      }
      if (first == null) {
        first = action;
      }
    }
    return first != null ? first : legal.get(0); // legal.get(0): only the pass
  }

  private static String cardOf(Action action) {
    return action.getPlay().getCard();
  }
}
