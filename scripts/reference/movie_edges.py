#!/usr/bin/env python3
"""Hand-written movie call sequences for the differential test: the error paths and edge
cases that sampled, policy-compliant proposals rarely or never reach (unknown movies,
theaters, shows, dates, seats and ticket types; taken seats; payments off by a cent or
split in two; concessions; the BKG001-BKG003 slot limit; seat changes that cost more with
and without the exact payment, that cost less, or that touch another booking's seats;
changes and cancellations of bookings that are not confirmed; a second cancel; seats
released by a cancellation; a seat named twice, no seats, a negative concession (our
departures); think; calculator inputs Python rejects).

Our code, written for Tracer. Reads a movie database directory in the reference format
(from `tracer reference calls --domain movie --out DIR`, DIR/data) to pick suitable shows
and bookings, and writes one JSON list of calls per line:

    python3 movie_edges.py <data dir> <calls.jsonl>
"""
import json
import os
import sys


def call(name, **kwargs):
    return {"name": name, "kwargs": kwargs}


def price(theater, show, seats, concessions=()):
    """The reference's arithmetic, re-derived: per-seat tax, rounding after each sum."""
    rate = float(theater["pricing_rules"]["tax_rate_percent"]) / 100.0
    fee = float(show["price_schema"]["fees"]["convenience_fee"])
    ps = [float(show["price_schema"][t]) for _, t in seats]
    taxes = [round((p + fee) * rate, 2) for p in ps]
    tickets = round(sum(round(p, 2) for p in ps), 2)
    fees = round(sum(round(fee, 2) for _ in ps), 2)
    tax = round(sum(taxes), 2)
    c_sub = round(sum(round(c["price_each"], 2) * c["quantity"] for c in concessions), 2)
    c_tax = round(sum(round(c["price_each"] * rate, 2) * c["quantity"] for c in concessions), 2)
    fees_total = round(fees + float(theater["pricing_rules"]["fees"]["booking_fee"]), 2)
    tax_total = round(tax + c_tax, 2)
    return round(tickets + c_sub + fees_total + tax_total, 2)


def main():
    data, out = sys.argv[1], sys.argv[2]
    load = lambda stem: json.load(open(os.path.join(data, stem + ".json")))
    theaters, bookings = load("theaters"), load("bookings")

    def held(tid, sid):
        return {s["seat_id"] for b in bookings.values() if b["theater_id"] == tid
                and b["show_id"] == sid and b["status"] == "confirmed" for s in b["seats"]}

    def free_seats(tid, show):
        aud = theaters[tid]["auditoriums"][show["auditorium_id"]]
        taken = held(tid, show["show_id"])
        return [s["seat_id"] for row in aud["seat_map"]["rows"].values() for s in row
                if s["seat_id"] not in taken and not s["wheelchair_accessible"]]

    shows = [(tid, d, s) for tid in sorted(theaters) for d, day in theaters[tid]["dates"].items()
             for s in day["shows"] if s["status"] == "scheduled"]
    tid, date, show = next(x for x in shows if len(free_seats(x[0], x[2])) >= 8)
    t = theaters[tid]
    free = free_seats(tid, show)
    sid = show["show_id"]
    taken = sorted(held(tid, sid))
    confirmed = [b for b in sorted(bookings) if bookings[b]["status"] == "confirmed"
                 and len(bookings[b]["seats"]) >= 2]
    bid = confirmed[0]
    b = bookings[bid]
    bt = theaters[b["theater_id"]]
    bshow = next(s for day in bt["dates"].values() for s in day["shows"] if s["show_id"] == b["show_id"])
    bfree = free_seats(b["theater_id"], bshow)
    other = next((x for x in confirmed if x != bid and bookings[x]["show_id"] == b["show_id"]), None)
    pending = next((x for x in sorted(bookings) if bookings[x]["status"] == "pending"), None)
    refunded = next((x for x in sorted(bookings) if bookings[x]["status"] in ("canceled", "refunded")), None)
    customer = {"name": {"first_name": "Ada", "last_name": "Quill"}, "email": "ada.quill@example.com",
                "phone": "+1 555 010 0199"}
    method = {"source": "card", "payment_method_id": "EDGE-CARD", "extra_info": {"brand": "VISA", "last_four": "4242"}}

    def pay(pid, amount, m=method):
        return {"payment_id": pid, "amount": amount, "method": m, "created_at": "24-05-15-15-00"}

    def spec(seats):
        return [{"seat_id": s, "ticket_type": ty} for s, ty in seats]

    two = [(free[0], "adult"), (free[1], "child")]
    total = price(t, show, two)
    pop = {"item_id": "EDGE-C1", "name": "Popcorn", "size": "Large", "quantity": 2, "price_each": 6.75}
    with_pop = price(t, show, two, [pop])

    def book(seats, payments, **more):
        return call("create_booking", theater_id=tid, show_id=sid, customer=customer, seats=spec(seats),
                    delivery_method=more.pop("delivery_method", "e-ticket"), payments=payments, **more)

    seqs = []
    # Lookups that miss, and lookups with filters.
    seqs.append([call("get_movie_details", movie_id="NOPE-M"), call("get_theater_details", theater_id="NOPE-T"),
                 call("get_booking_details", booking_id="NOPE-B"), call("get_show_status", theater_id=tid, show_id="NOPE-S"),
                 call("get_show_details", theater_id=tid, show_id=sid, date="99-01-01"),
                 call("get_show_details", theater_id=tid, show_id="NOPE-S", date=date),
                 call("get_show_details", theater_id=tid, show_id=sid, date=date),
                 call("list_shows", theater_id=tid, date="99-01-01"),
                 call("list_shows", theater_id=tid, date=date, movie_id=show["movie_id"]),
                 call("list_shows", theater_id=tid, date=date, movie_id="NOPE-M"),
                 call("list_shows", theater_id="NOPE-T", date=date),
                 call("get_seat_availability", theater_id=tid, show_id="NOPE-S")])
    # Previews that fail, then one with concessions.
    seqs.append([call("price_preview", theater_id=tid, show_id=sid, seats=spec([("Z9-99", "adult")])),
                 call("price_preview", theater_id=tid, show_id=sid, seats=spec([(free[0], "student")])),
                 call("price_preview", theater_id="NOPE-T", show_id=sid, seats=spec(two)),
                 call("price_preview", theater_id=tid, show_id=sid, seats=spec(two), concessions=[pop])]
                + ([call("price_preview", theater_id=tid, show_id=sid, seats=spec([(taken[0], "adult")]))] if taken else []))
    # Payments: a cent short, split in two exact halves, no payments; the slot limit.
    half = round(with_pop / 2, 2)
    seqs.append([book(two, [pay("P-1", round(total - 0.01, 2))]),
                 book(two, []),
                 book(two, [pay("P-1", half), pay("P-2", round(with_pop - half, 2))], concessions=[pop],
                      special_requests="Aisle seats please", delivery_method="kiosk"),
                 call("get_seat_availability", theater_id=tid, show_id=sid),
                 book(two, [pay("P-3", total)]),
                 book([(free[2], "senior")], [pay("P-4", price(t, show, [(free[2], "senior")]))]),
                 book([(free[3], "adult")], [pay("P-5", price(t, show, [(free[3], "adult")]))]),
                 book([(free[4], "adult")], [pay("P-6", price(t, show, [(free[4], "adult")]))]),
                 call("get_booking_details", booking_id="BKG001")])
    # Our departures: a seat named twice, no seats, a negative concession.
    seqs.append([book([(free[0], "adult"), (free[0], "adult")], [pay("P-1", price(t, show, [(free[0], "adult")] * 2))])])
    seqs.append([book([], [pay("P-1", float(t["pricing_rules"]["fees"]["booking_fee"]))])])
    neg = dict(pop, quantity=-1)
    seqs.append([book(two, [pay("P-1", price(t, show, two, [neg]))], concessions=[neg])])
    # Seat changes: more seats without and with the exact payment, fewer, someone else's seat.
    cur = [(s["seat_id"], s["ticket_type"]) for s in b["seats"]]
    more = cur + [(bfree[0], "adult")]
    diff = round(price(bt, bshow, more) - price(bt, bshow, cur), 2)
    seqs.append([call("update_booking_seats", booking_id=bid, seats=spec(more)),
                 call("update_booking_seats", booking_id=bid, seats=spec(more), payment=pay("X-1", round(diff + 1, 2))),
                 call("update_booking_seats", booking_id=bid, seats=spec(more), payment=pay(bid + "-adj-pay", diff)),
                 call("update_booking_seats", booking_id=bid, seats=spec(cur[:1])),
                 call("update_booking_seats", booking_id=bid, seats=spec([(cur[0][0], "child")])),
                 call("get_seat_availability", theater_id=b["theater_id"], show_id=b["show_id"])])
    seqs.append([call("update_booking_seats", booking_id=bid, seats=spec([(bfree[1], t2) for _, t2 in cur[:1]] + cur[1:])),
                 call("update_booking_seats", booking_id=bid, seats=spec([("Z9-99", "adult")])),
                 call("update_booking_seats", booking_id=bid, seats=spec([(cur[0][0], "vip")])),
                 call("update_booking_seats", booking_id="NOPE-B", seats=spec(cur))]
                + ([call("update_booking_seats", booking_id=bid,
                         seats=spec(cur + [(bookings[other]["seats"][0]["seat_id"], "adult")]))] if other else []))
    # Our departures on seat changes: no seats, a seat twice.
    seqs.append([call("update_booking_seats", booking_id=bid, seats=[])])
    seqs.append([call("update_booking_seats", booking_id=bid, seats=spec([cur[0], cur[0]]))])
    # Cancellations: refund, a second cancel, seats released, changes refused afterwards.
    seqs.append([call("cancel_booking", booking_id=bid), call("cancel_booking", booking_id=bid),
                 call("get_seat_availability", theater_id=b["theater_id"], show_id=b["show_id"]),
                 call("update_booking_seats", booking_id=bid, seats=spec(cur)),
                 call("cancel_booking", booking_id="NOPE-B")])
    if pending:
        seqs.append([call("cancel_booking", booking_id=pending),
                     call("update_booking_seats", booking_id=pending,
                          seats=[{"seat_id": s["seat_id"], "ticket_type": s["ticket_type"]} for s in bookings[pending]["seats"]])])
    if refunded:
        seqs.append([call("cancel_booking", booking_id=refunded), call("get_booking_details", booking_id=refunded)])
    # Generic tools.
    seqs.append([call("calculate", expression="12.5 * 2 + 1.75"), call("calculate", expression="(1 + 2) * 3"),
                 call("calculate", expression="1 / 0"), call("calculate", expression="abc"),
                 call("think", thought="Check the seats first."),
                 call("transfer_to_human_agents", summary="Customer asks for compensation."),
                 call("list_movies"), call("list_theaters")])
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
