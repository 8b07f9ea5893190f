#!/usr/bin/env python3
"""Hand-written telecom call sequences for the differential test: the edge cases and error
paths that sampled, policy-compliant proposals rarely or never reach (payments above the
balance or negative, troubleshooting pairs without steps, half-valid device lists, Python
number parsing, repeated writes, ...).

Our code, written for Tracer. Reads a telecom database directory in the reference format
(from `tracer reference calls --domain telecom --out DIR`, DIR/data) to pick suitable
customers, and writes one JSON list of calls per line:

    python3 telecom_edges.py <data dir> <calls.jsonl>

Record the reference's answers with `reference.py record` (see README.md).
"""
import json
import os
import sys


def main():
    data, out = sys.argv[1], sys.argv[2]
    load = lambda stem: json.load(open(os.path.join(data, stem + ".json")))
    customers, billing, devices, tickets = (
        load("customers"), load("billing"), load("devices"), load("support_tickets"))
    ids = sorted(customers)
    category = lambda name: devices[name]["category"]

    def first(pred):
        return next(c for c in ids if pred(customers[c]))

    owing = first(lambda c: billing[c["customer_id"]]["current_balance"] > 0)
    settled = first(lambda c: billing[c["customer_id"]]["current_balance"] == 0)
    spare = first(lambda c: any(d["service"] is None for d in c["devices"])
                  and len(c["devices"]) >= 3)
    ticket_owner = tickets[sorted(tickets)[0]]["customer_id"]
    ticket = sorted(tickets)[0]
    model = {cat: next(n for n in sorted(devices) if category(n) == cat)
             for cat in ("mobile_phone", "networking", "tv", "phone", "security")}
    held = customers[spare]["services"]
    free_plan = next(s for s in sorted(load("services")) if s not in held)
    spare_ids = [d["device_id"] for d in customers[spare]["devices"]]
    bal = billing[owing]["current_balance"]

    def pay(cid, amount, method="credit_card", date="2025-07-16"):
        return {"name": "record_payment",
                "kwargs": {"customer_id": cid, "amount": amount, "method": method, "date": date}}

    def call(name, **kw):
        return {"name": name, "kwargs": kw}

    seqs = [
        # Payments: over the balance (clamped at zero), negative, partial then rest, none owed.
        [pay(owing, bal * 3), call("get_billing_details", customer_id=owing)],
        [pay(owing, -12.5, "bank_transfer")],
        [pay(owing, round(bal / 3, 2)), pay(owing, 0.005), pay(owing, bal)],
        [pay(settled, 20, "cash", "yesterday"), pay("ZZ_NOT_FOUND_0000", 5)],
        # Troubleshooting every category with every issue, and bad issues.
        [call("troubleshoot_device", device_name=model[c], issue=i)
         for c in ("mobile_phone", "networking") for i in ("no_service", "slow_speeds", "battery_drain")],
        [call("troubleshoot_device", device_name=model[c], issue="no_service")
         for c in ("tv", "phone", "security")]
        + [call("troubleshoot_device", device_name=model["security"], issue="battery_drain"),
           call("troubleshoot_device", device_name="ZZ_NOT_FOUND_0000", issue="No_Service")],
        [call("troubleshoot_device", device_name=model["tv"], issue="slow_speeds")],
        # Plans: remove then add back with the devices, a half-valid device list, repeats.
        [call("manage_service", customer_id=spare, action="remove", service_id=held[0]),
         call("manage_service", customer_id=spare, action="add", service_id=held[0],
              devices_ids=spare_ids[:2]),
         call("get_billing_details", customer_id=spare),
         call("manage_service", customer_id=spare, action="list")],
        [call("manage_service", customer_id=spare, action="add", service_id=free_plan,
              devices_ids=[spare_ids[0], "99"])],
        [call("manage_service", customer_id=spare, action="add", service_id=free_plan,
              devices_ids=[]),
         call("manage_service", customer_id=spare, action="add", service_id=free_plan),
         call("manage_service", customer_id=spare, action="remove", service_id=free_plan),
         call("manage_service", customer_id=spare, action="remove", service_id=free_plan)],
        [call("manage_service", customer_id=spare, action="suspend", service_id=held[0]),
         call("manage_service", customer_id=spare, action="suspend"),
         call("manage_service", customer_id=spare, action="add", service_id=None),
         call("manage_service", customer_id=spare, action="remove", service_id="")],
        # Devices: ids count the list, a device added twice, unknown names.
        [call("add_device", customer_id=spare, device_name=model["tv"]),
         call("add_device", customer_id=spare, device_name=model["tv"]),
         call("get_customer_details", customer_id=spare),
         call("add_device", customer_id=spare, device_name=model["tv"].lower())],
        # Tickets: every category, default and explicit priority, free-form updates.
        [call("create_support_ticket", customer_id=ticket_owner, category=c)
         for c in ("mobile", "internet", "tv", "billing")],
        [call("create_support_ticket", customer_id=ticket_owner, category=c, priority=p)
         for c, p in (("account", "low"), ("device", "urgent"), ("security", "high"),
                      ("phone", "medium"), ("Billing", "high"), ("billing", "HIGH"))],
        [call("create_support_ticket", customer_id=ticket_owner, category="device"),
         call("get_support_ticket_details", ticket_id="TICKET241"),
         call("modify_support_ticket", ticket_id="TICKET241", status="escalated", priority="p0"),
         call("modify_support_ticket", ticket_id=ticket, status="resolved", priority="low"),
         call("get_support_ticket_details", ticket_id=ticket)],
        # Billing settings, including a cycle the policy does not offer.
        [call("manage_billing", customer_id=settled, paperless=False, auto_pay=True,
              billing_cycle="weekly"),
         call("manage_billing", customer_id=settled, paperless=True, auto_pay=False,
              billing_cycle="annual"),
         call("get_billing_details", customer_id=settled)],
        # Lookups: case and formatting, Python number parsing, the calculator.
        [call("find_customer_by_email", email=customers[settled]["demographics"]["email"].upper()),
         call("find_customer_by_phone",
              phone="+1 " + "".join(ch for ch in customers[settled]["demographics"]["phone"] if ch.isdigit())[3:]),
         call("find_customer_by_phone", phone=customers[settled]["demographics"]["phone"].replace(" ", ""))],
        [call("get_senior_discount", original_price=p)
         for p in ("45.00", "3", " 12.5 ", "1_000", "1e2", "-7", "inf", "nan", "", "$40", "4.994")],
        [call("calculate", expression=e)
         for e in ("1/8", "2.675*1", "2 ** 10", "7 // 2", "(85 + 60) * 1.08", "1/0", "(1", "-3 - -3")],
        [call("get_services"), call("get_device_details", device_name=model["tv"]),
         call("get_service_details", service_id=free_plan), call("think", thought="note")],
    ]
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")
    print(f"wrote {len(seqs)} sequences -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
