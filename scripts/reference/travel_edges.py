#!/usr/bin/env python3
"""Hand-written travel call sequences for the differential test: the error paths and edge
cases that sampled, policy-compliant proposals rarely or never reach (departures that are
sold out, 'limited' or short of slots, payments that do not add up by a float hair, no
payments at all, unsaved methods, insurance labels with odd case and spacing or free text,
an explicit handling agent, the TAU001-TAU003 slot limit, a changed traveler count, add-on
changes on a departure no longer open, a zero price delta, a move to the same date,
changes after a cancellation, a second cancel, search filters that are empty strings,
calculator inputs Python rejects).

Our code, written for Tracer. Reads a travel database directory in the reference format
(from `tracer reference calls --domain travel --out DIR`, DIR/data) to pick suitable
travelers and packages, and writes one JSON list of calls per line:

    python3 travel_edges.py <data dir> <calls.jsonl>

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
    packages, travelers, agents = load("packages"), load("travelers"), load("agents")
    payer = next(t for t in sorted(travelers) if len(travelers[t]["payment_methods"]) >= 2)
    person = travelers[payer]
    methods = sorted(person["payment_methods"])
    me = {"first_name": person["name"]["first_name"], "last_name": person["name"]["last_name"],
          "dob": person["dob"]}
    pal = {"first_name": "Ada", "last_name": "Quill", "dob": "88-03-09"}
    pid, date = next((p, d) for p in sorted(packages) for d, dep in packages[p]["departures"].items()
                     if dep["status"] == "available" and dep["available_slots"] >= 8
                     and len(packages[p]["managed_by_agents"]) >= 2)
    base = packages[pid]["departures"][date]["base_price"]
    closed = [(p, d) for p in sorted(packages) for d, dep in packages[p]["departures"].items()
              if dep["status"] != "available"]
    few = next((p, d, dep["available_slots"]) for p in sorted(packages)
               for d, dep in packages[p]["departures"].items()
               if dep["status"] == "available" and dep["available_slots"] <= 4)
    room = {"room_type": "double", "occupancy": 2}
    extra = {"type": "meal", "description": "Farewell dinner", "price": 0.1}
    extra2 = {"type": "activity", "description": "Snorkelling gear rental", "price": 0.2}

    def book(party, add_ons, insurance, payments, **more):
        return call("book_package", traveler_id=payer, package_id=more.pop("package_id", pid),
                    departure_date=more.pop("departure_date", date), travelers=party,
                    rooming=room, add_ons=add_ons, insurance=insurance,
                    payment_methods=payments, **more)

    two = [me, pal]
    exact = round(base * 2 + 0.1 + 0.2 + 200.0, 2)
    seqs = []
    # Totals: premium with odd case and spaces prices at $100 a head; a float-hair mismatch.
    seqs.append([book(two, [extra, extra2], " Premium ",
                      [{"payment_id": methods[0], "amount": exact - 0.01}]),
                 book(two, [extra, extra2], " Premium ",
                      [{"payment_id": methods[0], "amount": exact - 100},
                       {"payment_id": methods[1], "amount": 100}])])
    # Free-text insurance costs nothing; no payments at all prints "paid 0".
    seqs.append([book(two, [], "Standard Plan", []),
                 book(two, [], "Standard Plan", [{"payment_id": methods[1], "amount": base * 2}])])
    # Unsaved method, unknown package, unknown or explicit agent.
    seqs.append([book(two, [], None, [{"payment_id": "PM-NOT-MINE", "amount": base * 2}]),
                 book(two, [], None, [{"payment_id": methods[0], "amount": base * 2}],
                      package_id="NOPE"),
                 book(two, [], None, [{"payment_id": methods[0], "amount": base * 2}],
                      agent_id="NOPE"),
                 book(two, [], None, [{"payment_id": methods[0], "amount": base * 2}],
                      agent_id=packages[pid]["managed_by_agents"][1])])
    # Closed departures and too few slots.
    for p, d in closed[:2]:
        seqs.append([book([me], [], None, [{"payment_id": methods[0], "amount": 1.0}],
                          package_id=p, departure_date=d)])
    fp, fd, n = few
    seqs.append([book([me] * (n + 1), [], None, [{"payment_id": methods[0], "amount": 1.0}],
                      package_id=fp, departure_date=fd)])
    # Four bookings in one conversation: the fourth has no slot id left.
    one = [{"payment_id": methods[0], "amount": base}]
    seqs.append([call("book_package", traveler_id=payer, package_id=pid, departure_date=date,
                      travelers=[me], rooming={"room_type": "single", "occupancy": 1},
                      add_ons=[], insurance=None, payment_methods=one)] * 4)
    # Changes on a fresh booking: same add-ons (no delta), new add-ons, same date, a count
    # change, rooming, then cancel twice and change after cancelling.
    made = call("book_package", traveler_id=payer, package_id=pid, departure_date=date,
                travelers=two, rooming=room, add_ons=[], insurance="standard",
                payment_methods=[{"payment_id": methods[0], "amount": base * 2 + 100.0}])
    seqs.append([made,
                 call("update_booking_add_ons", booking_id="TAU001", add_ons=[],
                      payment_method_id=methods[1]),
                 call("update_booking_add_ons", booking_id="TAU001", add_ons=[extra, extra2],
                      payment_method_id=methods[1]),
                 call("update_booking_departure_date", booking_id="TAU001",
                      new_departure_date=date, payment_method_id=methods[0]),
                 call("update_booking_travelers", booking_id="TAU001", travelers=[me]),
                 call("update_booking_travelers", booking_id="TAU001",
                      travelers=[me, dict(pal, dob="88-03-10")]),
                 call("update_booking_rooming", booking_id="TAU001",
                      rooming={"room_type": "twin", "occupancy": 2})])
    seqs.append([made, call("cancel_booking", booking_id="TAU001"),
                 call("cancel_booking", booking_id="TAU001")])
    seqs.append([made, call("cancel_booking", booking_id="TAU001"),
                 call("update_booking_rooming", booking_id="TAU001",
                      rooming={"room_type": "suite", "occupancy": 1})])
    # A seeded booking on a departure that is no longer open: add-ons cannot change.
    stuck = next(((t, b) for t in sorted(travelers) for b in travelers[t]["bookings"]
                  if b["status"] != "cancelled" and travelers[t]["payment_methods"]
                  and packages[b["package_id"]]["departures"][b["departure_date"]]["status"]
                  != "available"), None)
    if stuck:
        t, b = stuck
        seqs.append([call("update_booking_add_ons", booking_id=b["booking_id"], add_ons=[],
                          payment_method_id=sorted(travelers[t]["payment_methods"])[0])])
    # Search: empty strings filter nothing; a city with a country it is not in matches none.
    dest = packages[pid]["destinations"][0]
    seqs.append([call("search_packages", destination_city="", category=""),
                 call("search_packages", destination_city=dest["city"],
                      destination_country="Atlantis"),
                 call("search_packages", destination_country=dest["country"],
                      departure_date="99-01-01")])
    # Meetings: a taken slot, a date the agent does not work, an unknown traveler.
    aid = sorted(agents)[0]
    day, avail = next(iter(agents[aid]["availability"].items()))
    slot = avail["slots"][0]
    seqs.append([call("schedule_agent_meeting", agent_id=aid, date=day, time_range=slot,
                      traveler_id=payer),
                 call("schedule_agent_meeting", agent_id=aid, date=day, time_range=slot,
                      traveler_id=payer),
                 call("schedule_agent_meeting", agent_id=aid, date="99-12-31", time_range=slot,
                      traveler_id=payer),
                 call("schedule_agent_meeting", agent_id=aid, date=day, time_range=slot,
                      traveler_id="NOPE")])
    seqs.append([call("calculate", expression="1 / 0"),
                 call("calculate", expression="2 ** 10 / 3"),
                 call("calculate", expression="abs(-1)")])
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
