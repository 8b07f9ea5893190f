#!/usr/bin/env python3
"""Hand-written basketball call sequences for the differential test: the error paths and
branches that sampled, policy-compliant proposals rarely or never reach (every cell of the
status transition table, asking for the status a game already has, scores in games that
are not in progress, points that do not fit the type, a type the points table lacks and
one the model does not know, a club that is not playing, an unknown scorer, a score
followed by the score summary, ambiguous and unknown names, e-mail and league case,
inactive roster entries, season and status filters that match nothing, calculator inputs
Python rejects).

Our code, written for Tracer. Reads a basketball database directory in the reference
format (from `tracer reference calls --domain basketball --out DIR`, DIR/data) to pick
suitable games, clubs and players, and writes one JSON list of calls per line:

    python3 basketball_edges.py <data dir> <calls.jsonl>

Record the reference's answers with `reference.py record --family tau2` (see README.md).
"""
import collections
import json
import os
import sys


def call(name, **kwargs):
    return {"name": name, "kwargs": kwargs}


def main():
    data, out = sys.argv[1], sys.argv[2]
    load = lambda stem: json.load(open(os.path.join(data, stem + ".json")))
    clubs, players, games = load("clubs"), load("players"), load("games")
    by_status = collections.defaultdict(list)
    for gid in sorted(games):
        by_status[games[gid]["status"]].append(gid)
    live, sched, post, final = (by_status[s][0] for s in ("in_progress", "scheduled", "postponed", "final"))
    g = games[live]
    home, away = g["clubs"]["home"]["club_id"], g["clubs"]["away"]["club_id"]
    scorer = sorted(clubs[home]["roster"])[0]
    outsider = next(c for c in sorted(clubs) if c not in (home, away))
    names = collections.Counter((p["name"]["first_name"], p["name"]["last_name"]) for p in players.values())
    twin = next((n for n, k in sorted(names.items()) if k > 1), None)
    pid = sorted(players)[0]
    me = players[pid]
    inactive = next((c for c in sorted(clubs) if any(not e["active"] for e in clubs[c]["roster"].values())), home)
    league = clubs[home]["league"]

    def score(kind, points, club=home, player=scorer, game=live, ts="Q4 11:59"):
        return call("record_scoring_event", game_id=game, event_type=kind, points=points,
                    club_id=club, player_id=player, timestamp=ts)

    seqs = [
        # Every cell of the transition table, and the same status again (a no-op).
        [call("update_game_status", game_id=sched, new_status="scheduled")],
        [call("update_game_status", game_id=sched, new_status="final")],
        [call("update_game_status", game_id=sched, new_status="postponed"),
         call("update_game_status", game_id=sched, new_status="in_progress"),
         call("update_game_status", game_id=sched, new_status="scheduled"),
         call("update_game_status", game_id=sched, new_status="in_progress"),
         call("update_game_status", game_id=sched, new_status="final"),
         call("update_game_status", game_id=sched, new_status="scheduled")],
        [call("update_game_status", game_id=post, new_status="final"),
         call("update_game_status", game_id=post, new_status="scheduled")],
        [call("update_game_status", game_id=final, new_status="in_progress"),
         call("update_game_status", game_id=final, new_status="final")],
        [call("update_game_status", game_id=live, new_status="postponed"),
         call("update_game_status", game_id=live, new_status="done"),
         call("update_game_status", game_id="ZZ_NO_GAME", new_status="final")],
        # Scores: each type, then the summary with the new totals.
        [score("2PT", 2), score("3PT", 3, club=away, player=sorted(clubs[away]["roster"])[0]),
         score("FT", 1), call("get_game_score", game_id=live), call("get_game_timeline", game_id=live)],
        # 1PT: in the model and in the data, missing from the reference's points table.
        [score("1PT", 1)],
        # Checks in order: status, type, points, club, player.
        [score("2PT", 2, game=final)],
        [score("2PT", 2, game=sched)],
        [score("4PT", 4)],
        [score("3PT", 2)],
        [score("FT", 2)],
        [score("2PT", 2, club=outsider)],
        [score("2PT", 2, player="ZZ_NO_PLAYER")],
        [score("2PT", 2, game="ZZ_NO_GAME")],
        # A player who is not on the credited club's roster still scores (the tool does not
        # check; our policy does).
        [score("3PT", 3, player=sorted(clubs[away]["roster"])[0])],
        # Start a scheduled game, score in it, finish it, then try again.
        [call("update_game_status", game_id=sched, new_status="in_progress"),
         score("2PT", 2, game=sched, club=games[sched]["clubs"]["home"]["club_id"], ts="Q1 11:00"),
         call("update_game_status", game_id=sched, new_status="final"),
         score("2PT", 2, game=sched, club=games[sched]["clubs"]["home"]["club_id"], ts="Q1 10:00"),
         call("get_club_record", club_id=games[sched]["clubs"]["home"]["club_id"])],
        # Lookups: case, ambiguity, misses.
        [call("find_player_id_by_email", email=me["email"].upper()),
         call("find_player_id_by_email", email="nobody@nowhere.example"),
         call("find_player_id_by_name", first_name=me["name"]["first_name"].upper(),
              last_name=me["name"]["last_name"].lower()),
         call("find_player_id_by_name", first_name="Zed", last_name="Nobody")],
        [call("list_clubs_by_league", league=league.upper()),
         call("list_clubs_by_league", league="Nowhere League"),
         call("list_all_clubs")],
        [call("list_club_roster_ids", club_id=inactive),
         call("list_club_roster_ids", club_id=inactive, active_only=False),
         call("list_club_roster_ids", club_id="ZZ_NO_CLUB")],
        [call("get_club_schedule", club_id=home, season="2023-24"),
         call("get_club_schedule", club_id=home, status="final"),
         call("get_club_schedule", club_id=home, season="2024-25", status="in_progress"),
         call("get_club_schedule", club_id=home, status="no-such-status"),
         call("get_club_schedule", club_id="ZZ_NO_CLUB")],
        [call("get_player_total_points", player_id=scorer),
         call("get_player_total_points", player_id=scorer, season="2024-25"),
         call("get_player_total_points", player_id=scorer, season="1999-00"),
         call("get_player_total_points", player_id="ZZ_NO_PLAYER"),
         call("get_club_record", club_id=home, season="2024-25"),
         call("get_club_record", club_id="ZZ_NO_CLUB")],
        [call("get_game_box_score", game_id=final), call("get_game_box_score", game_id=sched),
         call("get_game_timeline", game_id="ZZ_NO_GAME"), call("get_game_score", game_id="ZZ_NO_GAME"),
         call("get_club_details", club_id="ZZ_NO_CLUB"), call("get_player_details", player_id="ZZ")],
        # Address: any strings are taken; the record shows them.
        [call("modify_player_address", player_id=pid, street="7 Pier Road", city="Harborview",
              state="WA", country="USA", zip="98101"),
         call("get_player_details", player_id=pid),
         call("modify_player_address", player_id="ZZ_NO_PLAYER", street="1 A St", city="B",
              state="C", country="D", zip="E")],
        [call("calculate", expression="(12 + 7) * 3 / 4"), call("calculate", expression="2 ** 3"),
         call("calculate", expression="abs(-1)"), call("transfer_to_human_agents", summary="wants a trade")],
    ]
    if twin:
        seqs.append([call("find_player_id_by_name", first_name=twin[0], last_name=twin[1])])
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
