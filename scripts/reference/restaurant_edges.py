#!/usr/bin/env python3
"""Hand-written restaurant call sequences for the differential test: the error paths and
edge cases that sampled, policy-compliant proposals rarely or never reach (a cancel after an
instrument change or after a refunded plate swap, a second cancel, swaps to a plate of
another dish, one not served today or an unknown one, mismatched lists, a plate named more
often than the ticket holds it, duplicate plates, an instrument of another patron, the same
instrument again, tickets past 'placed' or of the wrong service mode, tips that need
rounding or are negative or land on a cancelled ticket, lookups by email in another case
and by name with a wrong postal code, the calculator's refusals).

Our code, written for Tracer. Reads a restaurant database directory in the reference format
(from `tracer reference calls --domain restaurant --out DIR`, DIR/data) to pick suitable
patrons, tickets and plates, and writes one JSON list of calls per line:

    python3 restaurant_edges.py <data dir> <calls.jsonl>

Record the reference's answers with `reference.py record --family tau2` (see README.md).
"""
import json
import os
import sys


def call(name, **kwargs):
    return {"name": name, "kwargs": kwargs}


def main():
    data, out = sys.argv[1], sys.argv[2]
    load = lambda stem: json.load(open(os.path.join(data, stem + ".json")))
    menu, patrons, tickets = load("menu_board"), load("patron_registry"), load("service_tickets")
    dish_of = {p: d for d in menu for p in menu[d]["selections"]}
    ids = sorted(tickets)

    def payments(t):
        return [c for c in tickets[t]["charges"] if c["kind"] == "payment"]

    def instruments(t):
        return sorted(patrons[tickets[t]["guest_ref"]]["saved_instruments"])

    placed = [t for t in ids if tickets[t]["state"] == "placed"]
    movable = next(t for t in placed if len(payments(t)) == 1 and len(instruments(t)) >= 2)
    paid_with = payments(movable)[0]["instrument_ref"]
    other = next(i for i in instruments(movable) if i != paid_with)

    def swaps(t, cheaper):
        for e in tickets[t]["line_entries"]:
            for p, plate in sorted(menu[e["dish_ref"]]["selections"].items()):
                if p != e["plate_ref"] and plate["served_today"] and (plate["cost"] < e["cost"]) == cheaper:
                    return e["plate_ref"], p
        return None

    refundable = next(t for t in placed if len(instruments(t)) >= 2 and swaps(t, True))
    old, cheap = swaps(refundable, True)
    refund_to = next(i for i in instruments(refundable) if i != payments(refundable)[0]["instrument_ref"])
    pricier = next(t for t in placed if swaps(t, False))
    p_old, p_new = swaps(pricier, False)
    foreign_plate = next(p for p in sorted(dish_of) if dish_of[p] != dish_of[p_old])
    unserved = next((p for p in sorted(dish_of) if not menu[dish_of[p]]["selections"][p]["served_today"]
                     and any(e["dish_ref"] == dish_of[p] and e["plate_ref"] != p
                             for t in placed for e in tickets[t]["line_entries"])), None)
    doubled = next((t for t in placed if len(tickets[t]["line_entries"]) >= 2
                    and tickets[t]["line_entries"][0]["plate_ref"] == tickets[t]["line_entries"][1]["plate_ref"]), None)
    busy = next(t for t in ids if tickets[t]["state"] == "in_progress")
    delivery = next(t for t in placed if tickets[t]["service_mode"] == "delivery")
    dine_in = next(t for t in placed if tickets[t]["service_mode"] == "dine_in")
    stranger = next(i for p in sorted(patrons) for i in sorted(patrons[p]["saved_instruments"])
                    if p != tickets[movable]["guest_ref"])
    someone = patrons[tickets[movable]["guest_ref"]]
    address = dict(line_one="5 Beacon Road", line_two="", municipality="Dunedin",
                   province="Otago", nation="New Zealand", postal_code="9016")

    seqs = [
        # Cancel after an instrument change: the reference refunds the old instrument twice.
        [call("modify_placed_ticket_instrument", ticket_ref=movable, instrument_ref=other),
         call("cancel_placed_ticket", ticket_ref=movable, reason="plans changed"),
         call("cancel_placed_ticket", ticket_ref=movable, reason="again"),
         call("add_tip_to_ticket", ticket_ref=movable, tip_total=2.0, instrument_ref=other)],
        # A cheaper plate refunded to another instrument, then a cancel.
        [call("modify_placed_ticket_items", ticket_ref=refundable, plate_refs=[old],
              new_plate_refs=[cheap], instrument_ref=refund_to),
         call("modify_placed_ticket_instrument", ticket_ref=refundable, instrument_ref=refund_to),
         call("cancel_placed_ticket", ticket_ref=refundable, reason="ordered by mistake")],
        # A pricier plate charged, then back; errors in the reference's order.
        [call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old],
              new_plate_refs=[foreign_plate], instrument_ref=instruments(pricier)[0]),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old],
              new_plate_refs=["NoSuchP"], instrument_ref=instruments(pricier)[0]),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old],
              new_plate_refs=[], instrument_ref=instruments(pricier)[0]),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old, p_old, p_old],
              new_plate_refs=[p_new, p_new, p_new], instrument_ref=instruments(pricier)[0]),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old],
              new_plate_refs=[p_new], instrument_ref=stranger),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_old],
              new_plate_refs=[p_new], instrument_ref=instruments(pricier)[0]),
         call("modify_placed_ticket_items", ticket_ref=pricier, plate_refs=[p_new],
              new_plate_refs=[p_old], instrument_ref=instruments(pricier)[-1]),
         call("cancel_placed_ticket", ticket_ref=pricier, reason="no longer needed")],
        [call("modify_placed_ticket_instrument", ticket_ref=movable, instrument_ref=paid_with),
         call("modify_placed_ticket_instrument", ticket_ref=movable, instrument_ref=stranger),
         call("modify_placed_ticket_instrument", ticket_ref=busy, instrument_ref=instruments(busy)[0]),
         call("cancel_placed_ticket", ticket_ref=busy, reason="late"),
         call("modify_placed_ticket_items", ticket_ref=busy, plate_refs=[], new_plate_refs=[],
              instrument_ref=instruments(busy)[0])],
        [call("modify_placed_ticket_dropoff", ticket_ref=delivery, **address),
         call("modify_placed_ticket_dropoff", ticket_ref=dine_in, **address),
         call("modify_placed_ticket_dropoff", ticket_ref=busy, **address),
         call("modify_placed_ticket_table", ticket_ref=dine_in, zone="Terrace", table_no="41", seat_count=6),
         call("modify_placed_ticket_table", ticket_ref=delivery, zone="Terrace", table_no="41", seat_count=6),
         call("modify_placed_ticket_table", ticket_ref="NoTicket", zone="Terrace", table_no="41", seat_count=6)],
        [call("add_tip_to_ticket", ticket_ref=busy, tip_total=3.456, instrument_ref=instruments(busy)[0]),
         call("add_tip_to_ticket", ticket_ref=busy, tip_total=-1, instrument_ref=instruments(busy)[0]),
         call("add_tip_to_ticket", ticket_ref=busy, tip_total=0, instrument_ref=instruments(busy)[0]),
         call("add_tip_to_ticket", ticket_ref=busy, tip_total=2, instrument_ref=stranger)],
        [call("find_patron_ref_by_email", email=someone["contact_email"].upper()),
         call("find_patron_ref_by_email", email="nobody@example.invalid"),
         call("find_patron_ref_by_name_zip", given=someone["identity"]["given"].lower(),
              family=someone["identity"]["family"].upper(), postal_code=someone["location"]["postal_code"]),
         call("find_patron_ref_by_name_zip", given=someone["identity"]["given"],
              family=someone["identity"]["family"], postal_code="0"),
         call("list_all_dishes"),
         call("calculate", expression="12.5 * 3 - 4"),
         call("calculate", expression="2 ** x"),
         call("calculate", expression="5 / 0")],
    ]
    if unserved:
        dish = dish_of[unserved]
        t, e = next((t, e) for t in placed for e in tickets[t]["line_entries"]
                    if e["dish_ref"] == dish and e["plate_ref"] != unserved)
        seqs.append([call("modify_placed_ticket_items", ticket_ref=t, plate_refs=[e["plate_ref"]],
                          new_plate_refs=[unserved], instrument_ref=instruments(t)[0])])
    if doubled:
        e = tickets[doubled]["line_entries"][0]
        alt = next((p for p, plate in sorted(menu[e["dish_ref"]]["selections"].items())
                    if p != e["plate_ref"] and plate["served_today"]), e["plate_ref"])
        seqs.append([call("modify_placed_ticket_items", ticket_ref=doubled,
                          plate_refs=[e["plate_ref"], e["plate_ref"]], new_plate_refs=[e["plate_ref"], alt],
                          instrument_ref=instruments(doubled)[0]),
                     call("cancel_placed_ticket", ticket_ref=doubled, reason="plans changed")])
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
