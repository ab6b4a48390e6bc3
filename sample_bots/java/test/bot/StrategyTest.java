package bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import barbu.v1.ArbiterOuterClass.Action;
import barbu.v1.ArbiterOuterClass.Contract;
import barbu.v1.ArbiterOuterClass.Declare;
import barbu.v1.ArbiterOuterClass.Phase;
import barbu.v1.ArbiterOuterClass.Play;
import barbu.v1.ArbiterOuterClass.View;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The strategy's rules of thumb, one situation each (run by build.sh --test). */
class StrategyTest {
  static List<Action> cards(String... names) {
    List<Action> legal = new ArrayList<>();
    for (String name : names) {
      Play play = name.equals("pass") ? Play.newBuilder().setPass(true).build() : Play.newBuilder().setCard(name).build();
      legal.add(Action.newBuilder().setPlay(play).build());
    }
    return legal;
  }

  static List<Action> declarations(Contract... contracts) {
    List<Action> legal = new ArrayList<>();
    for (Contract contract : contracts) {
      if (contract == Contract.TRUMPS) {
        for (String suit : new String[] {"C", "D", "H", "S"}) {
          legal.add(declaration(Declare.newBuilder().setContract(contract).setTrump(suit)));
        }
      } else if (contract == Contract.DOMINO) {
        for (char rank : Strategy.RANKS.toCharArray()) {
          legal.add(declaration(Declare.newBuilder().setContract(contract).setStartRank(String.valueOf(rank))));
        }
      } else {
        legal.add(declaration(Declare.newBuilder().setContract(contract)));
      }
    }
    return legal;
  }

  static Action declaration(Declare.Builder declare) {
    return Action.newBuilder().setDeclare(declare).build();
  }

  static View playView(Contract contract, String trump, String... trick) {
    return View.newBuilder()
        .setPhase(Phase.PLAY)
        .setDeclaration(Declare.newBuilder().setContract(contract).setTrump(trump))
        .addAllTrick(List.of(trick))
        .build();
  }

  /** The card of the action chosen, which must be one of the legal actions as offered. */
  static String card(Action chosen, List<Action> legal) {
    assertTrue(legal.stream().anyMatch(offered -> offered == chosen), chosen + " is not one of the actions offered");
    return chosen.getPlay().getCard();
  }

  static View declareView(String... hand) {
    return View.newBuilder().setPhase(Phase.DECLARE).addAllHand(List.of(hand)).build();
  }

  @Test
  void declaresTrumpsInAFiveCardSuit() {
    View view = declareView("2C", "3D", "4H", "5H", "9H", "JH", "AH", "2S", "3S", "4S", "5C", "6C", "7D");
    Declare d = Strategy.decide(view, declarations(Contract.NO_TRICKS, Contract.TRUMPS, Contract.DOMINO)).getDeclare();
    assertEquals(Contract.TRUMPS, d.getContract());
    assertEquals("H", d.getTrump());
  }

  @Test
  void declaresTheNegativeContractItRisksLeast() {
    View view = declareView("QC", "QD", "QH", "QS", "2C", "3C", "4D", "5D", "2S", "3S", "4C", "5S", "6D");
    Declare d = Strategy.decide(view, declarations(Contract.NO_QUEENS, Contract.BARBU, Contract.TRUMPS)).getDeclare();
    assertEquals(Contract.BARBU, d.getContract(), "four queens: not No Queens");
  }

  @Test
  void doublesAsLittleAsItMay() {
    View view = View.newBuilder().setPhase(Phase.DOUBLE).build();
    List<Action> legal = List.of(
        Action.newBuilder().setDouble(barbu.v1.ArbiterOuterClass.Double.getDefaultInstance()).build(),
        Action.newBuilder().setDouble(barbu.v1.ArbiterOuterClass.Double.newBuilder().addTargets(2)).build());
    assertSame(legal.get(0), Strategy.decide(view, legal));
  }

  @Test
  void ducksWithTheHighestCardThatLoses() {
    List<Action> legal = cards("3H", "9H", "QH", "AH");
    assertEquals("9H", card(Strategy.decide(playView(Contract.NO_TRICKS, "", "TH", "2C"), legal), legal));
  }

  @Test
  void takesALostTrickWithItsHighestCardWhenLast() {
    List<Action> legal = cards("JD", "KD");
    assertEquals("KD", card(Strategy.decide(playView(Contract.NO_TRICKS, "", "2D", "5D", "9D"), legal), legal));
  }

  @Test
  void shedsTheKingOfHeartsWhenVoidInBarbu() {
    List<Action> legal = cards("AC", "2H", "KH", "AS");
    assertEquals("KH", card(Strategy.decide(playView(Contract.BARBU, "", "5D"), legal), legal));
  }

  @Test
  void winsTrumpsTricksCheaply() {
    List<Action> legal = cards("2S", "9S", "KS"); // void in clubs: ruff with the lowest trump
    assertEquals("2S", card(Strategy.decide(playView(Contract.TRUMPS, "S", "AC", "3C"), legal), legal));
  }

  @Test
  void dominoPlaysACardThatOpensItsOwnAndPassesOnlyWhenItMust() {
    View view = View.newBuilder().setPhase(Phase.DOMINO_PLAY).addAllHand(List.of("8C", "6D", "7D", "AS")).build();
    List<Action> legal = cards("8C", "6D", "pass");
    assertEquals("6D", card(Strategy.decide(view, legal), legal), "the 7 of diamonds follows the 6");
    assertTrue(Strategy.decide(view, cards("pass")).getPlay().getPass());
  }
}
