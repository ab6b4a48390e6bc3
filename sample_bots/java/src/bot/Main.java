package bot;

import barbu.v1.ArbiterGrpc;
import barbu.v1.ArbiterOuterClass.Action;
import barbu.v1.ArbiterOuterClass.ArbiterMessage;
import barbu.v1.ArbiterOuterClass.BotMessage;
import barbu.v1.ArbiterOuterClass.DealResult;
import barbu.v1.ArbiterOuterClass.DecisionRequest;
import barbu.v1.ArbiterOuterClass.Hello;
import barbu.v1.ArbiterOuterClass.MatchEnd;
import barbu.v1.ArbiterOuterClass.MatchStart;
import barbu.v1.ArbiterOuterClass.Reply;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A Barbu Arena bot in Java, built from Debian's packages only: the protocol here, the play in
 * Strategy.java.
 *
 * <pre>
 *   bash build.sh     # in this folder: installs the Debian packages, generates barbu.v1, builds ./bot
 *   ./bot             # the arbiter starts it like this (arbiter check-bot --listen 127.0.0.1:0 -- ./bot)
 * </pre>
 *
 * <p>The arbiter's launcher sets BARBU_ARBITER (host:port, or unix:/path/to/socket) and
 * BARBU_TOKEN (the seat's secret). The bot opens ONE bidirectional stream (Arbiter.Play), sends
 * Hello, answers every DecisionRequest with one of its legal actions (the very Action message it
 * was offered) and the same request_id, and ignores the informational messages. Its play is a
 * pure function of each request, so it says in its hello that it can play several matches
 * (multi_match): after MatchEnd it keeps the stream open, plays the next MatchStart the arbiter
 * sends, and exits 0 when the arbiter ends the stream. Exit 1 when the session fails, 2 when the
 * environment is incomplete or the address is a Unix socket, which Debian's grpc-java cannot
 * dial (docs/protocol.md, Java). Logs go to stderr, which the arbiter keeps beside the match
 * log; BARBU_LOG_LEVEL=DEBUG shows every decision.
 */
public final class Main {
  static final int PROTOCOL_VERSION = 1;
  static final String BOT_NAME = "java-heuristic";
  static final String BOT_VERSION = "1.0";
  static final boolean MULTI_MATCH = true; // one process may play several matches (Hello.multi_match)

  private static final boolean DEBUG = "DEBUG".equalsIgnoreCase(env("BARBU_LOG_LEVEL"));

  private Main() {}

  public static void main(String[] args) {
    System.exit(run()); // exit whatever threads gRPC still has
  }

  static int run() {
    String address = env("BARBU_ARBITER");
    String token = System.getenv("BARBU_TOKEN");
    if (address.isEmpty()) {
      log("ERROR", "no arbiter address: set BARBU_ARBITER to host:port");
      return 2;
    }
    if (token == null || token.isEmpty()) {
      log("ERROR", "no seat token: set BARBU_TOKEN to the token the arbiter gave this seat");
      return 2;
    }
    if (address.startsWith("unix:")) {
      log("ERROR", "BARBU_ARBITER is a Unix socket, which this bot cannot dial: Debian's grpc-java"
          + " reaches Unix sockets only through netty's native epoll library, which Debian does not ship."
          + " Ask for a loopback TCP address: 'transport: tcp' in its entrant (tournament file or entrant.yaml),"
          + " arbiter check-bot --transport tcp (docs/protocol.md, Java)");
      return 2;
    }
    // Netty names its channels after a hardware address, and warns on stderr when it finds none,
    // as in a sandbox whose network is its loopback alone: give it a fixed one.
    if (System.getProperty("io.netty.machineId") == null) {
      System.setProperty("io.netty.machineId", "02:00:00:00:00:01");
    }
    // Plaintext HTTP/2 over TCP, as every local match; NIO, the transport Debian's netty has.
    ManagedChannel channel = NettyChannelBuilder.forTarget(address).usePlaintext().build();
    try {
      return play(channel, address, token);
    } catch (InterruptedException e) {
      log("ERROR", "interrupted");
      return 1;
    } finally {
      channel.shutdownNow();
    }
  }

  /** What the response observer hands the main thread: a message, an error, or the end (both null). */
  private record Event(ArbiterMessage message, Throwable error) {}

  /** The session; its exit code. gRPC's threads only queue events: all the play is on this thread. */
  static int play(ManagedChannel channel, String address, String token) throws InterruptedException {
    BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    StreamObserver<BotMessage> out =
        ArbiterGrpc.newStub(channel)
            .play(
                new StreamObserver<ArbiterMessage>() {
                  @Override
                  public void onNext(ArbiterMessage message) {
                    events.add(new Event(message, null));
                  }

                  @Override
                  public void onError(Throwable error) {
                    events.add(new Event(null, error));
                  }

                  @Override
                  public void onCompleted() {
                    events.add(new Event(null, null));
                  }
                });
    log("DEBUG", "connecting to the arbiter at " + address + " (protocol v" + PROTOCOL_VERSION + ")");
    Hello hello =
        Hello.newBuilder()
            .setProtocolVersion(PROTOCOL_VERSION)
            .setToken(token)
            .setBotName(BOT_NAME)
            .setBotVersion(BOT_VERSION)
            .setMultiMatch(MULTI_MATCH)
            .build();
    out.onNext(BotMessage.newBuilder().setHello(hello).build());
    boolean inMatch = false;
    int matches = 0;
    int decisions = 0;
    while (true) {
      Event event = events.take();
      if (event.message() == null) {
        if (event.error() == null && !inMatch && matches > 0) {
          return 0; // the arbiter ended the stream after a match: all done
        }
        Status status = event.error() == null ? Status.OK : Status.fromThrowable(event.error());
        String what =
            status.getCode() == Status.Code.UNAVAILABLE && matches == 0 && decisions == 0
                ? "cannot reach the arbiter at " + address
                : "the arbiter ended the session";
        String why = event.error() == null ? "after " + decisions + " decisions" : status.getCode() + ": " + status.getDescription();
        log("ERROR", what + " before the match ended: " + why);
        return 1;
      }
      ArbiterMessage message = event.message();
      switch (message.getMsgCase()) {
        case MATCH_START -> {
          MatchStart s = message.getMatchStart();
          inMatch = true;
          decisions = 0;
          log("INFO", String.format("match %s: seat %d, %d deals, rules %s, %ss a decision + %ss reserve",
              s.getMatchId(), s.getSeat(), s.getDeals(), s.getRulesJson(), s.getDecisionSeconds(), s.getReserveSeconds()));
        }
        case REQUEST -> {
          DecisionRequest request = message.getRequest();
          Action action = choose(request);
          Reply reply = Reply.newBuilder().setRequestId(request.getRequestId()).setAction(action).build();
          out.onNext(BotMessage.newBuilder().setReply(reply).build());
          decisions++;
          log("DEBUG", "request " + request.getRequestId() + " (" + request.getView().getPhase() + "): " + describe(action));
        }
        case DEAL_END -> {
          var results = message.getDealEnd().getView().getResultsList();
          if (!results.isEmpty()) {
            DealResult r = results.get(results.size() - 1);
            log("DEBUG", "deal " + r.getDeal() + " (" + r.getDeclaration().getContract() + "): scores " + r.getScoresList());
          }
        }
        case MATCH_END -> {
          MatchEnd end = message.getMatchEnd();
          inMatch = false;
          matches++;
          String reason = end.getReason().isEmpty() ? "" : ": " + end.getReason();
          log("INFO", "match ended (" + end.getStatus() + reason + ") after " + decisions + " decisions: totals "
              + end.getTotalsList() + ", places " + end.getPlacesList());
          // A multi-match bot keeps its stream open: the arbiter sends the next MatchStart or
          // ends the stream (the end event above).
          if (!MULTI_MATCH) {
            out.onCompleted();
          }
        }
        default -> log("DEBUG", "ignoring an unknown message from the arbiter");
      }
    }
  }

  /** The strategy's choice; the first legal action if it fails (a request is never left unanswered). */
  static Action choose(DecisionRequest request) {
    try {
      return Strategy.decide(request.getView(), request.getLegalList());
    } catch (RuntimeException e) {
      log("ERROR", "the strategy failed, playing the first legal action: " + e);
      return request.getLegal(0);
    }
  }

  static String describe(Action action) {
    return switch (action.getKindCase()) {
      case DECLARE -> {
        var d = action.getDeclare();
        yield d.getContract() + (d.getTrump().isEmpty() ? "" : " " + d.getTrump())
            + (d.getStartRank().isEmpty() ? "" : " from " + d.getStartRank());
      }
      case DOUBLE -> "double " + action.getDouble().getTargetsList();
      case PLAY -> action.getPlay().getPass() ? "pass" : action.getPlay().getCard();
      default -> "?";
    };
  }

  static String env(String name) {
    String value = System.getenv(name);
    return value == null ? "" : value.trim();
  }

  static void log(String level, String message) {
    if (!level.equals("DEBUG") || DEBUG) {
      System.err.println(Instant.now() + " " + level + " " + BOT_NAME + ": " + message);
    }
  }
}
