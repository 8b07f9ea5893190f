#!/usr/bin/env python3
"""Hand-written bank call sequences for the differential test: the error paths and edge
cases that sampled, policy-compliant proposals rarely or never reach (every refusal of the
two transfer tools and of loan payments in the reference's order, frozen, closed and
credit accounts, mixed currencies, suspended, unverified and unauthorised beneficiaries,
limits, methods outside the enum, an existing beneficiary id, expired cards, idempotent
freezes, transaction ids after an internal transfer, every search filter including empty
strings, limits of zero and below, case-insensitive email lookup, calculator inputs Python
rejects).

Our code, written for Tracer. Reads a bank database directory in the reference format
(from `tracer reference calls --domain bank --out DIR`, DIR/data) to pick suitable clients,
and writes one JSON list of calls per line:

    python3 bank_edges.py <data dir> <calls.jsonl>

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
    clients, loans, bens = load("clients"), load("loans"), load("beneficiaries")
    ids = sorted(clients)

    def accounts(cid):
        return list(clients[cid]["accounts"].values())

    def find(pred):
        return next(c for c in ids if pred(clients[c]))

    # A client with two active non-credit accounts in one currency.
    def pair_ok(c):
        acc = [a for a in c["accounts"].values() if a["status"] == "active" and a["type"] != "credit"]
        return any(a["currency"] == b["currency"] and a is not b for a in acc for b in acc)

    rich = find(pair_ok)
    acc = [a for a in accounts(rich) if a["status"] == "active" and a["type"] != "credit"]
    src, dst = next((a, b) for a in acc for b in acc if a is not b and a["currency"] == b["currency"])
    other = next(c for c in ids if c != rich)
    other_acc = accounts(other)[0]["account_id"]
    seqs = []
    s, d = src["account_id"], dst["account_id"]
    avail = src["balance"]["available"]
    # Internal transfers: every refusal, then two that succeed, then what reads show.
    seqs.append([
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=0),
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=-5.5),
        call("initiate_internal_transfer", client_id="ZZ_NOT_FOUND_0000", from_account_id=s, to_account_id=d, amount=5),
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=other_acc, amount=5),
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=avail + 1),
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=12.345, description=""),
    ])
    seqs.append([
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=s, amount=10.1),
        call("get_account_details", account_id=s),
    ])
    seqs.append([
        call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=7.25, description="Rent share"),
        call("get_recent_transactions", account_id=d, limit=2),
    ])
    credit = find(lambda c: any(a["type"] == "credit" and a["status"] == "active" for a in c["accounts"].values())
                  and len(c["accounts"]) > 1)
    cr = next(a for a in accounts(credit) if a["type"] == "credit" and a["status"] == "active")
    cr_to = next(a for a in accounts(credit) if a["account_id"] != cr["account_id"])
    seqs.append([call("initiate_internal_transfer", client_id=credit, from_account_id=cr["account_id"],
                      to_account_id=cr_to["account_id"], amount=1)])
    mixed = next(((c, a, b) for c in ids for a in accounts(c) for b in accounts(c)
                  if a["currency"] != b["currency"] and a["status"] == "active" and b["status"] == "active"
                  and a["type"] != "credit"), None)
    if mixed:
        c, a, b = mixed
        seqs.append([call("initiate_internal_transfer", client_id=c, from_account_id=a["account_id"],
                          to_account_id=b["account_id"], amount=1)])
    frozen = next(((c, a) for c in ids for a in accounts(c) if a["status"] == "frozen"), None)
    closed = next(((c, a) for c in ids for a in accounts(c) if a["status"] == "closed"), None)
    if frozen:
        c, a = frozen
        others = [x for x in accounts(c) if x["account_id"] != a["account_id"]]
        seq = [call("freeze_account", account_id=a["account_id"], reason="again")]
        if others:
            seq.append(call("initiate_internal_transfer", client_id=c, from_account_id=others[0]["account_id"],
                            to_account_id=a["account_id"], amount=1))
        seq += [call("unfreeze_account", account_id=a["account_id"]),
                call("unfreeze_account", account_id=a["account_id"])]
        seqs.append(seq)
    if closed:
        c, a = closed
        seqs.append([call("freeze_account", account_id=a["account_id"], reason="lost"),
                     call("unfreeze_account", account_id=a["account_id"]),
                     call("get_recent_transactions", account_id=a["account_id"])])
    seqs.append([call("freeze_account", account_id="ZZ_NOT_FOUND_0000", reason="x"),
                 call("unfreeze_account", account_id="ZZ_NOT_FOUND_0000")])

    # Beneficiaries: owned and not, each status, each verification state.
    def ben_of(pred):
        return next(((b["client_id"], b) for b in bens.values() if pred(b)), (None, None))

    owner, good = ben_of(lambda b: b["status"] == "active" and b["verification"]["status"] == "verified"
                         and any(clients[b["client_id"]]["accounts"].get(x, {}).get("status") == "active"
                                 for x in b["allowed_from_account_ids"]))
    frm = next(x for x in good["allowed_from_account_ids"]
               if clients[owner]["accounts"][x]["status"] == "active")
    fa = clients[owner]["accounts"][frm]
    limit = good["transfer_limits"]["per_transfer_limit"]
    not_allowed = next((a["account_id"] for a in accounts(owner)
                        if a["account_id"] not in good["allowed_from_account_ids"] and a["status"] == "active"), None)
    bid = good["beneficiary_id"]
    seq = [
        call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=frm, beneficiary_id=bid, amount=0),
        call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=other_acc, beneficiary_id=bid, amount=1),
        call("initiate_transfer_to_beneficiary", client_id=other, from_account_id=other_acc, beneficiary_id=bid, amount=1),
        call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=frm, beneficiary_id=bid, amount=limit + 1),
        call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=frm, beneficiary_id=bid, amount=1.5, method="Wire", description=""),
    ]
    if not_allowed:
        seq.insert(1, call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=not_allowed,
                           beneficiary_id=bid, amount=1))
    if fa["balance"]["available"] < limit:
        seq.append(call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=frm,
                        beneficiary_id=bid, amount=fa["balance"]["available"] + 0.5))
    # A method outside the enum last: the reference debits before it fails.
    seq.append(call("initiate_transfer_to_beneficiary", client_id=owner, from_account_id=frm,
                    beneficiary_id=bid, amount=1, method="Carrier pigeon"))
    seqs.append(seq)
    for pred in (lambda b: b["status"] == "suspended",
                 lambda b: b["status"] == "active" and b["verification"]["status"] == "pending",
                 lambda b: b["status"] == "active" and b["verification"]["status"] == "failed"):
        o, b = ben_of(pred)
        if not b:
            continue
        f = b["allowed_from_account_ids"][0] if b["allowed_from_account_ids"] else accounts(o)[0]["account_id"]
        seqs.append([
            call("initiate_transfer_to_beneficiary", client_id=o, from_account_id=f, beneficiary_id=b["beneficiary_id"], amount=1),
            call("verify_beneficiary", client_id=other if other != o else rich, beneficiary_id=b["beneficiary_id"]),
            call("verify_beneficiary", client_id=o, beneficiary_id=b["beneficiary_id"], method="instant"),
            call("initiate_transfer_to_beneficiary", client_id=o, from_account_id=f, beneficiary_id=b["beneficiary_id"], amount=1),
            call("get_beneficiary_details", beneficiary_id=b["beneficiary_id"]),
            # The reference stores any method label; ours refuses one outside the enum.
            call("verify_beneficiary", client_id=o, beneficiary_id=b["beneficiary_id"], method="telepathy"),
        ])
    # Adding beneficiaries: refusals, nulls everywhere allowed, an id that exists.
    new = dict(beneficiary_type="individual", display_name=None, first_name="Ada", last_name="Quill",
               business_name=None, bank_name="Test Bank", account_number_masked="****0001",
               routing_number=None, iban=None, swift_bic=None, address1="1 Main St", address2="",
               city="Springfield", state="IL", zip="62701", country="United States",
               per_transfer_limit=100, daily_limit=200.5)
    seqs.append([
        call("add_beneficiary", client_id="ZZ_NOT_FOUND_0000", beneficiary_id="NEWB0001",
             allowed_from_account_ids=[s], **new),
        call("add_beneficiary", client_id=rich, beneficiary_id="NEWB0001", allowed_from_account_ids=[other_acc], **new),
        call("add_beneficiary", client_id=rich, beneficiary_id="NEWB0001", allowed_from_account_ids=[s],
             verification_method="carrier", **new),
        call("add_beneficiary", client_id=rich, beneficiary_id="NEWB0001", allowed_from_account_ids=[s],
             **dict(new, beneficiary_type="robot")),
        call("add_beneficiary", client_id=rich, beneficiary_id="NEWB0001", allowed_from_account_ids=[], **new),
        call("list_client_beneficiaries", client_id=rich),
        call("add_beneficiary", client_id=rich, beneficiary_id="NEWB0002", allowed_from_account_ids=[s, d],
             verification_method="instant", **dict(new, first_name=None, last_name=None)),
        call("list_client_beneficiaries", client_id=rich),
        call("initiate_transfer_to_beneficiary", client_id=rich, from_account_id=s, beneficiary_id="NEWB0002", amount=1),
        call("verify_beneficiary", client_id=rich, beneficiary_id="NEWB0002"),
        call("initiate_transfer_to_beneficiary", client_id=rich, from_account_id=d, beneficiary_id="NEWB0002", amount=2),
    ])
    seqs.append([
        call("get_beneficiary_details", beneficiary_id=bid),
        call("add_beneficiary", client_id=rich, beneficiary_id=bid, allowed_from_account_ids=[s], **new),
    ])
    # Cards: each state, idempotence, unknown.
    for status in ("active", "blocked", "expired"):
        card = next((k for c in ids for k, v in clients[c]["cards"].items() if v["status"] == status), None)
        if card:
            seqs.append([call("freeze_card", card_id=card, reason="lost"),
                         call("freeze_card", card_id=card, reason="lost"),
                         call("unfreeze_card", card_id=card),
                         call("unfreeze_card", card_id=card)])
    seqs.append([call("get_card_details", card_id="ZZ_NOT_FOUND_0000"),
                 call("freeze_card", card_id="ZZ_NOT_FOUND_0000", reason="x"),
                 call("unfreeze_card", card_id="ZZ_NOT_FOUND_0000")])
    # Loan payments: every refusal, a method outside the enum, two that succeed.
    lid = clients[rich]["loan_ids"][0] if clients[rich]["loan_ids"] else None
    foreign_loan = next(l for l, v in loans.items() if v["client_id"] != rich)
    if lid:
        seqs.append([
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=s, amount=0),
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=other_acc, amount=1),
            call("make_loan_payment", client_id=rich, loan_id="ZZ_NOT_FOUND_0000", from_account_id=s, amount=1),
            call("make_loan_payment", client_id=rich, loan_id=foreign_loan, from_account_id=s, amount=1),
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=s, amount=avail + 1),
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=s, amount=3.333, method="ACH", description=""),
            call("get_loan_details", loan_id=lid),
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=s, amount=1, method="Barter"),
        ])
        # A loan payment after an internal transfer: transaction numbering.
        seqs.append([
            call("initiate_internal_transfer", client_id=rich, from_account_id=s, to_account_id=d, amount=2),
            call("make_loan_payment", client_id=rich, loan_id=lid, from_account_id=s, amount=2),
        ])
        if frozen:
            c, a = frozen
            if clients[c]["loan_ids"]:
                seqs.append([call("make_loan_payment", client_id=c, loan_id=clients[c]["loan_ids"][0],
                                  from_account_id=a["account_id"], amount=1)])
    # Reads: filters, limits, lookups.
    seqs.append([
        call("find_client_id_by_email", email=clients[rich]["contact"]["email"].upper()),
        call("find_client_id_by_email", email="nobody@example.invalid"),
        call("get_client_details", client_id="ZZ_NOT_FOUND_0000"),
        call("list_client_accounts", client_id=rich),
        call("list_client_accounts", client_id="ZZ_NOT_FOUND_0000"),
        call("get_loan_details", loan_id="ZZ_NOT_FOUND_0000"),
        call("get_beneficiary_details", beneficiary_id="ZZ_NOT_FOUND_0000"),
        call("get_account_details", account_id="ZZ_NOT_FOUND_0000"),
        call("get_recent_transactions", account_id="ZZ_NOT_FOUND_0000"),
        call("calculate", expression="2 ** 3"),
        call("calculate", expression="abs(2)"),
        call("calculate", expression="10 / 4"),
    ])
    busy = load("transactions")
    per_acc = {}
    for t in busy.values():
        per_acc.setdefault((t["client_id"], t["account_id"]), []).append(t)
    (cid, aid), txs = max(per_acc.items(), key=lambda kv: (len(kv[1]), kv[0]))
    merchant = next((t["merchant"]["name"] for t in txs if t.get("merchant")), "Mart")
    seqs.append([
        call("get_recent_transactions", account_id=aid, limit=0),
        call("get_recent_transactions", account_id=aid, limit=-2),
        call("get_recent_transactions", account_id=aid, limit=100),
        call("search_transactions", client_id=cid, account_id=aid),
        call("search_transactions", client_id=cid, account_id=aid, start_date="", end_date="", transaction_type="",
             status="", merchant_name_contains=""),
        call("search_transactions", client_id=cid, account_id=aid, start_date="2025-09", end_date="2025-10-15"),
        call("search_transactions", client_id=cid, account_id=aid, min_amount=0, max_amount=50.5),
        call("search_transactions", client_id=cid, account_id=aid, transaction_type="payment", status="posted"),
        call("search_transactions", client_id=cid, account_id=aid, merchant_name_contains=merchant[2:6].upper()),
        call("search_transactions", client_id=cid, account_id=aid, min_amount=None, status=None),
        call("search_transactions", client_id=cid, account_id=other_acc if cid != other else s),
        call("search_transactions", client_id="ZZ_NOT_FOUND_0000", account_id=aid),
    ])
    with open(out, "w") as f:
        for seq in seqs:
            f.write(json.dumps(seq) + "\n")
    print(f"{len(seqs)} edge sequences -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
