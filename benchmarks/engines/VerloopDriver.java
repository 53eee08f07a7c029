// A line protocol around the MichielVerloop/AbaloneAI engine (Java alpha-beta), so that
// benchmarks/external_match.py can play it.  Compiled by that script against an unmodified
// checkout of their sources.  It lives in their search package because the search entry
// it calls (DefaultMinimax.minimax(int)) and the lock that guards its board are protected.
//
// Positions are the cells of each player in the order they move (their "black" first), in
// their own notation (Board.cubeToAbal): "a1 a2 ... / i5 i6 ..." (three or four groups with
// more players).  With four players their teams are players 1+2 and 3+4 of their list and
// the teams alternate, so the order of moving is their players 1, 3, 2, 4.
// Requests, one a line; every answer is one line:
//   new LAYOUT          -> "position ..."  (LAYOUT: STANDARD2 or BELGIAN_DAISY for two
//                                           players, STANDARD3 for three, STANDARD4 for
//                                           two teams of two; a new game)
//   play CELLS > DEST = POSITION -> "ok"   (the side to move moves the line CELLS one step,
//                                           the first cell to DEST, reaching POSITION;
//                                           "error ..." when their rules disagree)
//   go MS               -> "move POSITION DEPTH MS"  (their search for the side to move,
//                                           iterative deepening within MS milliseconds)
//   quit
// Their code prints progress on standard output; it is sent to standard error instead.
// Their rules let a player move a partner's marbles along with its own in any move (a
// side-step with one own marble, an in-line move whose rear marble is its own); ours only in
// a push of opposing marbles whose rear marble is the mover's, so their search is given only
// the moves our rules allow: a move that pushes no opposing marble moves the mover's own.
package model.artificialintelligence.minimax;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

import model.gamelogic.Board;
import model.hex.Direction;
import model.hex.Hex;

import model.gamelogic.GameState;
import model.gamelogic.Marble;
import model.gamelogic.Move;
import model.gamelogic.MoveUndo;
import model.gamelogic.PlayableMove;
import model.gamelogic.Player;
import model.gamelogic.StartingLayout;
import model.gamelogic.Team;

public final class VerloopDriver {
    private GameState gameState;
    private final Map<Team, DefaultMinimax> searches = new HashMap<>();

    /** The evaluation and move ordering of the example player in their README, with their
     *  transposition table switched on. */
    private static GameStateEvaluator evaluator() {
        return new GameStateEvaluator.Builder()
                .considerEnemyPosition()
                .withCoherenceWeight(3)
                .withDistanceFromCenterWeight(8)
                .withFormationBreakWeight(10)
                .withMarbleConqueredWeight(800)
                .withImmediateMarbleCapWeight(0)
                .withSingleMarbleCapWeight(30)
                .withDoubleMarbleCapWeight(50)
                .build();
    }

    /** Their depth-bound iterative deepening with the settings of searchSettings(), its
     *  moves limited to those that move only the mover's own marbles (see above). */
    static final class OwnMarblesSearch extends DepthBoundIterativeDeepeningDfs {
        OwnMarblesSearch(GameState gameState, GameStateEvaluator evaluator) {
            super(gameState, evaluator, 64);
            evaluator.enableHashing();
            enableWindowNarrowing();
            enableEvaluateSorting(1, 2);
            enableHistoryHeuristicSorting(3, 4);
            enableMarbleOrdering(5, 5);
        }

        @Override
        public List<PlayableMove> getAllLegalMoves(int depth) {
            List<PlayableMove> moves = super.getAllLegalMoves(depth);
            List<PlayableMove> own = new ArrayList<>(moves.size());
            for (PlayableMove move : moves) {
                if (ownMarblesOnly(move)) own.add(move);
            }
            return own;
        }
    }

    /** Whether our rules allow the move: one that pushes opposing marbles (their rules make
     *  its rear marble the mover's own), or one whose marbles are all the mover's own. */
    static boolean ownMarblesOnly(Move move) {
        Player mover = move.getInitiator();
        boolean partners = false;
        for (Marble marble : move.getMarbles()) {
            if (marble.getTeam() != mover.getTeam()) return true;
            partners = partners || marble.getOwner() != mover;
        }
        return !partners;
    }

    private static Minimax.Builder searchSettings() {
        return new Minimax.Builder()
                .withDepthBoundIddfs(64)
                .enableHashing()
                .enableEvaluateSorting(1, 2)
                .enableHistoryHeuristicSorting(3, 4)
                .enableMarbleOrdering(5, 5);
    }

    /** The players in the order they move: the teams take turns, and within a team its
     *  players take turns. */
    private List<Player> playersInTurnOrder() {
        List<Player> players = new ArrayList<>();
        List<Team> teams = gameState.getTeams();
        int most = 0;
        for (Team team : teams) most = Math.max(most, team.players.size());
        for (int round = 0; round < most; round++) {
            for (Team team : teams) {
                if (round < team.players.size()) players.add(team.players.get(round));
            }
        }
        return players;
    }

    private String position() {
        StringBuilder out = new StringBuilder();
        List<Player> players = playersInTurnOrder();
        for (int i = 0; i < players.size(); i++) {
            if (i > 0) out.append(" /");
            TreeSet<String> cells = new TreeSet<>();
            for (Marble marble : players.get(i).getMarbles()) {
                if (!marble.isCaptured()) cells.add(Board.cubeToAbal(marble.getHex()));
            }
            for (String cell : cells) out.append(out.length() == 0 ? "" : " ").append(cell);
        }
        return out.toString();
    }

    private static String normalise(String text) {
        String[] sides = text.trim().split("/", -1);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < sides.length; i++) {
            if (i > 0) out.append(" /");
            String[] words = sides[i].trim().toLowerCase().split("\\s+");
            TreeSet<String> cells = new TreeSet<>(Arrays.asList(words));
            cells.remove("");
            for (String cell : cells) out.append(out.length() == 0 ? "" : " ").append(cell);
        }
        return out.toString();
    }

    private String newGame(String layoutName) {
        StartingLayout layout = StartingLayout.valueOf(layoutName);
        int count = layout == StartingLayout.STANDARD3 ? 3 : layout == StartingLayout.STANDARD4 ? 4 : 2;
        List<Player> players = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            players.add(Player.newPlayer("player" + (i + 1), searchSettings(), evaluator()));
        }
        gameState = new GameState(players, layout);
        searches.clear();
        return "position " + position();
    }

    /** "CELLS > DEST = POSITION": the side to move moves the line CELLS one step, the
     *  first cell going to DEST; POSITION is what the board must then show.  Built with
     *  their Move.newMove, so that a move that repeats an earlier position (which their
     *  own move generator leaves out, and our rules allow) can still be followed. */
    private String play(String request) throws Exception {
        String[] halves = request.split("=", 2);
        String[] line = halves[0].split(">", 2);
        if (halves.length != 2 || line.length != 2) return "error bad play request";
        String[] cells = line[0].trim().toLowerCase().split("\\s+");
        Set<Hex> coords = new HashSet<>();
        for (String cell : cells) coords.add(Board.abalToCube(cell));
        Hex from = Board.abalToCube(cells[0]);
        Hex to = Board.abalToCube(line[1].trim().toLowerCase());
        Direction direction = Direction.fromHex(to.subtract(from));
        PlayableMove move = Move.newMove(gameState.getBoard(), coords, direction,
                                         gameState.getCurrentPlayer());
        if (!move.isLegal()) return "error their rules forbid " + move.getMoveNotation();
        gameState.gameStats.initializeTurn();
        MoveUndo undo = gameState.makeMove(move);
        if (!position().equals(normalise(halves[1]))) {
            gameState.makeMove(undo);
            gameState.gameStats.commitTurn();
            return "error their board after " + move.getMoveNotation() + " is " + position();
        }
        gameState.gameStats.commitTurn();
        return "ok";
    }

    /** Their time-bound iterative deepening (TimeBoundIterativeDeepeningDfs), in
     *  milliseconds instead of whole seconds, and waiting for an interrupted depth to
     *  undo its moves before the board is touched again.  Depth 1 always completes. */
    private String go(int ms) throws Exception {
        Team team = gameState.getCurrentTeam();
        DefaultMinimax search = searches.get(team);
        if (search == null) {
            search = new OwnMarblesSearch(gameState, evaluator());
            searches.put(team, search);
        }
        gameState.gameStats.initializeTurn();
        long start = System.currentTimeMillis();
        PlayableMove best = null;
        int depthDone = 0;
        for (int depth = 1; depth <= 64; depth++) {
            long left = ms - (System.currentTimeMillis() - start);
            if (depth > 1 && left <= 0) break;
            final DefaultMinimax running = search;
            final int depthLimit = depth;
            final PlayableMove[] found = new PlayableMove[1];
            final Throwable[] failure = new Throwable[1];
            Thread worker = new Thread(() -> {
                try {
                    found[0] = running.minimax(depthLimit);
                } catch (InterruptedException stopped) {
                    // the clock ran out; minimax has undone its moves
                } catch (Throwable error) {
                    failure[0] = error;
                }
            });
            worker.start();
            if (depth == 1) worker.join();
            else worker.join(Math.max(1, left));
            if (worker.isAlive()) {
                worker.interrupt();
                worker.join();
                break;
            }
            if (failure[0] != null) throw new RuntimeException(failure[0]);
            if (found[0] == null) break;
            best = found[0];
            depthDone = depth;
        }
        search.resetHistoryTable();
        long took = System.currentTimeMillis() - start;
        gameState.makeMove(best);
        gameState.gameStats.commitTurn();
        return "move " + position() + " " + depthDone + " " + took;
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        System.setOut(System.err);
        VerloopDriver driver = new VerloopDriver();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+", 2);
            String answer;
            try {
                switch (words[0]) {
                    case "quit":
                        return;
                    case "new":
                        answer = driver.newGame(words[1].trim());
                        break;
                    case "play":
                        answer = driver.gameState == null ? "error no game" : driver.play(words[1]);
                        break;
                    case "go":
                        answer = driver.gameState == null ? "error no game"
                                : driver.go(Integer.parseInt(words[1].trim()));
                        break;
                    default:
                        answer = "error unknown request " + words[0];
                }
            } catch (Exception error) {
                answer = "error " + error.toString().replace('\n', ' ');
            }
            protocol.println(answer);
        }
    }
}
