// A Barbu Arena bot in Go, built from Debian's packages only: the protocol here, the play in
// strategy.go, the wire codec in codec.go.
//
//	bash build.sh     # in this folder: installs the Debian packages, generates barbupb, builds ./bot
//	./bot             # the arbiter starts it like this (arbiter check-bot -- ./bot)
//
// The arbiter's launcher sets BARBU_ARBITER (host:port, or unix:/path/to/socket) and
// BARBU_TOKEN (the seat's secret). The bot opens ONE bidirectional stream (Arbiter.Play), sends
// Hello, answers every DecisionRequest with one of its legal actions (the very Action message it
// was offered) and the same request_id, and ignores the informational messages. Its play is a
// pure function of each request, so it says in its hello that it can play several matches
// (multi_match): after MatchEnd it keeps the stream open, plays the next MatchStart the arbiter
// sends, and exits 0 when the arbiter ends the stream. Exit 1 when the session fails, 2 when the
// environment is incomplete. Logs go to stderr, which the arbiter keeps beside the match log;
// BARBU_LOG_LEVEL=DEBUG shows every decision.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"barbu/barbupb"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	protocolVersion = 1
	botName         = "go-heuristic"
	botVersion      = "1.0"
	multiMatch      = true // one process may play several matches (Hello.multi_match)
)

var debug = strings.EqualFold(strings.TrimSpace(os.Getenv("BARBU_LOG_LEVEL")), "DEBUG")

func logf(level, format string, args ...interface{}) {
	if level == "DEBUG" && !debug {
		return
	}
	fmt.Fprintf(os.Stderr, "%s %s %s: %s\n", time.Now().UTC().Format(time.RFC3339Nano), level, botName, fmt.Sprintf(format, args...))
}

// dialArbiter connects to host:port or unix:/path. Debian's grpc-go (1.33) has no "unix" resolver
// (grpc-go 1.34+ has), so the target goes through as it is and this dialer picks the network.
func dialArbiter(address string) (*grpc.ClientConn, error) {
	dialer := func(ctx context.Context, target string) (net.Conn, error) {
		var d net.Dialer
		if path := strings.TrimPrefix(target, "unix:"); path != target {
			return d.DialContext(ctx, "unix", strings.TrimPrefix(path, "//"))
		}
		return d.DialContext(ctx, "tcp", target)
	}
	// WithInsecure: no TLS, as every local match; grpc-go 1.34+ spells it insecure.NewCredentials().
	return grpc.Dial(address, grpc.WithInsecure(), grpc.WithContextDialer(dialer))
}

func describe(action *barbupb.Action) string {
	switch k := action.Kind.(type) {
	case *barbupb.Action_Declare:
		d := k.Declare
		s := d.Contract.String()
		if d.Trump != "" {
			s += " " + d.Trump
		}
		if d.StartRank != "" {
			s += " from " + d.StartRank
		}
		return s
	case *barbupb.Action_Double:
		return fmt.Sprintf("double %v", k.Double.Targets)
	case *barbupb.Action_Play:
		if k.Play.Pass {
			return "pass"
		}
		return k.Play.Card
	}
	return "?"
}

// play runs the session; it returns the process's exit code.
func play(address, token string) int {
	conn, err := dialArbiter(address)
	if err != nil {
		logf("ERROR", "cannot reach the arbiter at %s: %v", address, err)
		return 1
	}
	defer conn.Close()
	stream, err := barbupb.NewArbiterClient(conn).Play(context.Background())
	if err != nil {
		logf("ERROR", "cannot reach the arbiter at %s: %v", address, err)
		return 1
	}
	hello := &barbupb.Hello{
		ProtocolVersion: protocolVersion, Token: token, BotName: botName, BotVersion: botVersion, MultiMatch: multiMatch,
	}
	logf("DEBUG", "connecting to the arbiter at %s (protocol v%d)", address, protocolVersion)
	// A failed Send shows as io.EOF; the stream's status comes from the next Recv.
	if err := stream.Send(&barbupb.BotMessage{Msg: &barbupb.BotMessage_Hello{Hello: hello}}); err != nil && err != io.EOF {
		logf("ERROR", "cannot send the hello: %v", err)
		return 1
	}
	inMatch, matches, decisions := false, 0, 0
	for {
		message, err := stream.Recv()
		if err != nil {
			if err == io.EOF && !inMatch && matches > 0 {
				return 0 // the arbiter ended the stream after a match: all done
			}
			what := "the arbiter ended the session"
			if status.Code(err) == codes.Unavailable && decisions == 0 {
				what = "cannot reach the arbiter at " + address
			}
			if err == io.EOF {
				err = fmt.Errorf("after %d decisions", decisions)
			}
			logf("ERROR", "%s before the match ended: %v", what, err)
			return 1
		}
		switch m := message.Msg.(type) {
		case *barbupb.ArbiterMessage_MatchStart:
			s := m.MatchStart
			inMatch, decisions = true, 0
			logf("INFO", "match %s: seat %d, %d deals, rules %s, %gs a decision + %gs reserve",
				s.MatchId, s.Seat, s.Deals, s.RulesJson, s.DecisionSeconds, s.ReserveSeconds)
		case *barbupb.ArbiterMessage_Request:
			request := m.Request
			action := Decide(request.View, request.Legal)
			reply := &barbupb.Reply{RequestId: request.RequestId, Action: action}
			if err := stream.Send(&barbupb.BotMessage{Msg: &barbupb.BotMessage_Reply{Reply: reply}}); err != nil && err != io.EOF {
				logf("ERROR", "cannot send a reply: %v", err)
				return 1
			}
			decisions++
			logf("DEBUG", "request %d (%s): %s", request.RequestId, request.View.Phase, describe(action))
		case *barbupb.ArbiterMessage_DealEnd:
			if results := m.DealEnd.View.Results; len(results) > 0 {
				r := results[len(results)-1]
				logf("DEBUG", "deal %d (%s): scores %v", r.Deal, r.Declaration.GetContract(), r.Scores)
			}
		case *barbupb.ArbiterMessage_MatchEnd:
			end := m.MatchEnd
			inMatch = false
			matches++
			reason := ""
			if end.Reason != "" {
				reason = ": " + end.Reason
			}
			logf("INFO", "match ended (%s%s) after %d decisions: totals %v, places %v",
				end.Status, reason, decisions, end.Totals, end.Places)
			// A multi-match bot keeps its stream open: the arbiter sends the next MatchStart or
			// ends the stream (io.EOF above).
			if !multiMatch {
				stream.CloseSend()
			}
		default:
			logf("DEBUG", "ignoring an unknown message from the arbiter")
		}
	}
}

func main() {
	address := strings.TrimSpace(os.Getenv("BARBU_ARBITER"))
	token := os.Getenv("BARBU_TOKEN")
	if address == "" {
		logf("ERROR", "no arbiter address: set BARBU_ARBITER to host:port or unix:/path/to/socket")
		os.Exit(2)
	}
	if token == "" {
		logf("ERROR", "no seat token: set BARBU_TOKEN to the token the arbiter gave this seat")
		os.Exit(2)
	}
	os.Exit(play(address, token))
}
