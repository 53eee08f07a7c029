// A line protocol around the Cotix/Abalone engine (github.com/Cotix/Abalone), so that
// benchmarks/external_match.py can play it.  Built by that script against an unmodified
// checkout of their sources:
//     g++ -O3 -march=native -I SRC cotix_driver.cpp SRC/Game.cpp SRC/util.cpp -o cotix_driver
//
// Usage: cotix_driver [HASH_MB]   (their transposition tables, both together; their own
// default is 2 GB, which is too much for a shared machine)
//
// Boards are their two 128-bit bitboards (player 0, player 1) in hexadecimal.
// Requests, one a line; every answer is one line:
//   new                                   -> "ok"           (fresh tables for a new game)
//   go P MS B0 B1 START0 START1           -> "move B0 B1 DEPTH SCORE NODES MS"
//        P (0/1) moves, thinking MS milliseconds (their iterative_search); STARTn is the
//        number of marbles player n began with (their has_won counts losses from it).
//   moves P B0 B1                         -> "moves N B0 B1 B0 B1 ..." (their move generator)
//   daisy                                 -> "boards B0 B1"  (their Game::daisy())
//   start                                 -> "boards B0 B1"  (their constructor's layout)
//   quit
// Anything else: "error <why>".

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "Game.h"

// Their table sizes are plain globals in Game.cpp; set before a Game is made.
extern uint64_t transposition_size_short;
extern uint64_t transposition_size_long;
extern uint64_t transposition_size;

static std::string hex128(__uint128_t v) {
    char text[40];
    std::snprintf(text, sizeof text, "%016llx%016llx",
                  static_cast<unsigned long long>(v >> 64),
                  static_cast<unsigned long long>(v & 0xFFFFFFFFFFFFFFFFull));
    return text;
}

static bool parse128(const std::string &text, __uint128_t &out) {
    if (text.empty() || text.size() > 32) return false;
    __uint128_t value = 0;
    for (char ch : text) {
        int digit;
        if (ch >= '0' && ch <= '9') digit = ch - '0';
        else if (ch >= 'a' && ch <= 'f') digit = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F') digit = ch - 'A' + 10;
        else return false;
        value = (value << 4) | static_cast<__uint128_t>(digit);
    }
    out = value;
    return true;
}

static int popcount128(__uint128_t v) {
    return __builtin_popcountll(static_cast<uint64_t>(v)) +
           __builtin_popcountll(static_cast<uint64_t>(v >> 64));
}

int main(int argc, char **argv) {
    std::ios::sync_with_stdio(false);
    uint64_t hash_mb = argc > 1 ? std::stoull(argv[1]) : 512;
    // Each entry is two 128-bit words; the memory is split between their two tables.
    uint64_t entries = hash_mb * 1024 * 1024 / 32 / 2;
    if (entries < 1024) entries = 1024;
    transposition_size_short = entries | 1;
    transposition_size_long = entries | 1;
    transposition_size = transposition_size_short + transposition_size_long;

    // experimental = true, as their own stdin player (main.cpp) uses.
    std::unique_ptr<Game> game(new Game(2, true));
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string command;
        in >> command;
        if (command == "quit") {
            break;
        } else if (command == "new") {
            game.reset();
            game.reset(new Game(2, true));
            std::cout << "ok" << std::endl;
        } else if (command == "go" || command == "moves") {
            int player = -1, ms = 0, start0 = 14, start1 = 14;
            std::string b0, b1;
            if (command == "go") in >> player >> ms >> b0 >> b1 >> start0 >> start1;
            else in >> player >> b0 >> b1;
            __uint128_t boards[2];
            if (!in || (player != 0 && player != 1) || !parse128(b0, boards[0]) ||
                !parse128(b1, boards[1])) {
                std::cout << "error bad " << command << " request" << std::endl;
                continue;
            }
            game->board[0] = boards[0];
            game->board[1] = boards[1];
            if (command == "moves") {
                static __uint128_t found[2048];
                int count = game->get_possible_moves(player, found);
                std::cout << "moves " << count;
                for (int i = 0; i != count; ++i)
                    std::cout << ' ' << hex128(found[2 * i]) << ' ' << hex128(found[2 * i + 1]);
                std::cout << std::endl;
                continue;
            }
            game->piece_count[0] = start0;
            game->piece_count[1] = start1;
            uint64_t nodes_before = game->position_evaluated;
            auto started = std::chrono::steady_clock::now();
            int score = game->iterative_search(player, ms, true);
            auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - started).count();
            std::cout << "move " << hex128(game->board[0]) << ' ' << hex128(game->board[1]) << ' '
                      << game->last_depth << ' ' << score << ' '
                      << (game->position_evaluated - nodes_before) << ' ' << took << std::endl;
        } else if (command == "daisy" || command == "start") {
            Game fresh(2, true);
            if (command == "daisy") fresh.daisy();
            std::cout << "boards " << hex128(fresh.board[0]) << ' ' << hex128(fresh.board[1])
                      << std::endl;
        } else {
            std::cout << "error unknown request " << command << std::endl;
        }
    }
    return 0;
}
