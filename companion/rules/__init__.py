"""The rules of 6 nimmt!: pure functions and small value types, no Flask, no database.

Everything else in the companion calls into this package; nothing re-implements a rule.
The specification is the game's printed rules, summed up on the rules page
(``/rules``, ``templates/resolver/rules.html``). Players are any hashable keys (names in
the JSON API, ids in stored matches); cards are ints; rows are numbered 1-4 wherever a
human or the outside world sees them and 0-3 only inside this package.

Messages are plain English templates marked with ``N_``/``NP_`` so Babel extracts them;
callers pass their own ``gettext``/``ngettext`` to get them in the player's language.

The modules, from the bottom up: ``cards`` (cards, bulls, decks), ``checks`` (what may
not be entered), ``table`` (a round placed on the table), ``explain`` (why each card went
where it did), ``game`` (a game replayed), ``luck`` (each play's chance of taking a
row, and the bulls it was expected to take), ``review`` (each play of a finished game
weighed against the rest of its player's hand, on luck's placing code), ``correct`` (a
past round corrected), ``match`` (totals, the end, the winners) and ``names`` (the rule
for a player's name).
Callers use ``rules.X``: the public names of every module are here.
"""

from companion.rules.cards import (
    BULLS,
    DECKS,
    DEFAULT_LIMIT,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_,
    NP_,
    PLACED,
    PRO_DECKS,
    PRO_MAX_PLAYERS,
    ROW_LIMIT,
    ROWS,
    SIXTH,
    STANDARD_DECK,
    TOO_LOW,
    Gettext,
    Ngettext,
    Player,
    Rows,
    bulls,
    deck_size,
    pile_bulls,
    players_for_deck,
)
from companion.rules.checks import (
    RuleError,
    check_choices,
    check_game_bulls,
    check_plays,
    check_rows,
    check_starting_cards,
    most_taken,
    parse_bulls,
    parse_card,
    parse_row_choice,
    repeated_cards,
    whole_number,
)
from companion.rules.correct import (
    Dropped,
    Placement,
    RoundChange,
    Settled,
    compare,
    settle,
)
from companion.rules.explain import (
    explain,
    explain_choice,
)
from companion.rules.game import (
    GameState,
    RoundRefused,
    check_game,
    game_finished,
    replay_game,
)
from companion.rules.luck import (
    IMPROBABLE,
    Odds,
    PlayerLuck,
    game_luck,
    game_odds,
)
from companion.rules.match import (
    AT_LEAST,
    GAMES,
    MORE_THAN,
    EndCondition,
    Running,
    Standing,
    lowest,
    match_totals,
    running,
    standing,
)
from companion.rules.names import (
    MAX_NAME,
    MAX_NOTE,
    match_note,
    name_key,
    player_name,
)
from companion.rules.table import (
    ChoiceNeeded,
    Position,
    RoundResult,
    RowOption,
    Step,
    Table,
    continue_round,
    play_round,
    resolve_round,
    row_options,
    suggest_row,
    unneeded_choices,
    unused_choice,
)

__all__ = [
    "AT_LEAST",
    "BULLS",
    "DECKS",
    "DEFAULT_LIMIT",
    "GAMES",
    "HAND_SIZE",
    "IMPROBABLE",
    "MAX_NAME",
    "MAX_NOTE",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "MORE_THAN",
    "NP_",
    "N_",
    "PLACED",
    "PRO_DECKS",
    "PRO_MAX_PLAYERS",
    "ROWS",
    "ROW_LIMIT",
    "SIXTH",
    "STANDARD_DECK",
    "TOO_LOW",
    "ChoiceNeeded",
    "Dropped",
    "EndCondition",
    "GameState",
    "Gettext",
    "Ngettext",
    "Odds",
    "Placement",
    "Player",
    "PlayerLuck",
    "Position",
    "RoundChange",
    "RoundRefused",
    "RoundResult",
    "RowOption",
    "Rows",
    "RuleError",
    "Running",
    "Settled",
    "Standing",
    "Step",
    "Table",
    "bulls",
    "check_choices",
    "check_game",
    "check_game_bulls",
    "check_plays",
    "check_rows",
    "check_starting_cards",
    "compare",
    "continue_round",
    "deck_size",
    "explain",
    "explain_choice",
    "game_finished",
    "game_luck",
    "game_odds",
    "lowest",
    "match_note",
    "match_totals",
    "most_taken",
    "name_key",
    "parse_bulls",
    "parse_card",
    "parse_row_choice",
    "pile_bulls",
    "play_round",
    "player_name",
    "players_for_deck",
    "repeated_cards",
    "replay_game",
    "resolve_round",
    "row_options",
    "running",
    "settle",
    "standing",
    "suggest_row",
    "unneeded_choices",
    "unused_choice",
    "whole_number",
]
