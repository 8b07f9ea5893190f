#!/usr/bin/env python3
"""Hand-written school call sequences for the differential test: the error paths and edge
cases that sampled, policy-compliant proposals rarely or never reach (full courses, courses
of another term, time conflicts, unsaved or missing payment methods, totals that do not add
up, the REG001-REG003 slot limit, charges without a method, refunds with and without a
named method or any payment on record, a second cancel, fractional payments, times that
Python's int() rejects).

Our code, written for Tracer. Reads a school database directory in the reference format
(from `tracer reference calls --domain school --out DIR`, DIR/data) to pick suitable
students and courses, and writes one JSON list of calls per line:

    python3 school_edges.py <data dir> <calls.jsonl>

Record the reference's answers with `reference.py record --family tau2` (see README.md).
"""
import json
import os
import sys

RATE = {"undergraduate": 500, "graduate": 800, "continuing_ed": 400}


def minutes(hhmm):
    h, m = hhmm.split("-")
    return int(h) * 60 + int(m)


def clash(a, b):
    p, q = a["meeting_pattern"], b["meeting_pattern"]
    if not set(p["days"]) & set(q["days"]):
        return False
    return (minutes(p["start_time_est"]) < minutes(q["end_time_est"])
            and minutes(q["start_time_est"]) < minutes(p["end_time_est"]))


def main():
    data, out = sys.argv[1], sys.argv[2]
    load = lambda stem: json.load(open(os.path.join(data, stem + ".json")))
    courses, students, regs = load("courses"), load("students"), load("registrations")
    cids = sorted(courses)
    spring = [c for c in cids if courses[c]["term"] == "2025-SPRING"]
    fall = [c for c in cids if courses[c]["term"] == "2025-FALL"]
    full = next(c for c in spring if courses[c]["current_enrollment"] >= courses[c]["capacity"])
    open_spring = [c for c in spring if courses[c]["current_enrollment"] < courses[c]["capacity"]]
    a, b = next((x, y) for x in open_spring for y in open_spring
                if x < y and clash(courses[x], courses[y]))
    free = next(c for c in open_spring if not clash(courses[c], courses[a]) and c != a)
    two_methods = next(s for s in sorted(students) if len(students[s]["payment_methods"]) >= 2)
    other = next(s for s in sorted(students) if s != two_methods)
    methods = sorted(students[two_methods]["payment_methods"])
    active = next((r for r in sorted(regs) if regs[r]["courses"]
                   and regs[r]["student_id"] == two_methods), None)
    other_method = sorted(students[other]["payment_methods"])[0]
    reg = next(r for r in sorted(regs) if regs[r]["courses"] and len(regs[r]["courses"]) >= 2)
    reg_student = students[regs[reg]["student_id"]]
    reg_method = sorted(reg_student["payment_methods"])[0]
    reg_term = regs[reg]["term"]
    held = [c["course_id"] for c in regs[reg]["courses"]]
    addable = next(c for c in cids if courses[c]["term"] == reg_term and c not in held
                   and courses[c]["current_enrollment"] < courses[c]["capacity"]
                   and not any(clash(courses[c], courses[h]) for h in held))
    other_term = (fall if reg_term == "2025-SPRING" else spring)[0]
    level = "undergraduate"
    dept = courses[a]["department"]

    def call(name, **kw):
        return {"name": name, "kwargs": kw}

    def register(student, term, ids, pay=None, **kw):
        args = {"student_id": student, "term": term, "course_ids": ids, "study_level": level}
        if pay is not None:
            args["payment_methods"] = pay
        args.update(kw)
        return call("register_courses", **args)

    cost = lambda ids: sum(courses[c]["credits"] * RATE[level] for c in ids)
    seqs = [
        # Registration checks, in the reference's order.
        [register(two_methods, "2025-SPRING", [fall[0]]),
         register(two_methods, "2025-SPRING", [full]),
         register(two_methods, "2025-SPRING", [a, b]),
         register(two_methods, "2025-SPRING", [a], [{"payment_id": "ZZ_NOT_FOUND_0000", "amount": cost([a])}]),
         register(two_methods, "2025-SPRING", [a], [{"payment_id": methods[0], "amount": cost([a]) - 1}])],
        # Exact split payments with insurance, then the same call again (enrollment moves twice).
        [register(two_methods, "2025-SPRING", [a, free],
                  [{"payment_id": methods[0], "amount": 300}, {"payment_id": methods[1], "amount": cost([a, free])}],
                  health_insurance="yes", grading_options={free: "pass/fail"}),
         call("get_course_details", course_id=free)],
        # The three new-id slots, then the reference's limit.
        [register(other, "2025-FALL", []) for _ in range(4)],
        # A new registration changed, paid and cancelled twice.
        [register(two_methods, "2025-SPRING", [a], [{"payment_id": methods[0], "amount": cost([a])}]),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[free], drop_course_ids=[]),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[free], drop_course_ids=[],
              payment_id=methods[1]),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[], drop_course_ids=[a]),
         call("pay_registration", registration_id="REG001", payment={"payment_id": methods[0], "amount": 25}),
         call("cancel_registration", registration_id="REG001"),
         call("cancel_registration", registration_id="REG001")],
        # An empty registration (nothing due, nothing paid) charged, refunded, regraded.
        [register(other, "2025-FALL", []),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[fall[0]], drop_course_ids=[],
              payment_id=other_method),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[], drop_course_ids=[],
              grading_options={fall[0]: "audit"}),
         call("update_registration_courses", registration_id="REG001", add_course_ids=[], drop_course_ids=[fall[0]])],
        # An existing registration: add a full course, another term's, a clash, a real add.
        [call("update_registration_courses", registration_id=reg, add_course_ids=[full], drop_course_ids=[]),
         call("update_registration_courses", registration_id=reg, add_course_ids=[other_term], drop_course_ids=[]),
         call("update_registration_courses", registration_id=reg, add_course_ids=[addable], drop_course_ids=[],
              payment_id="ZZ_NOT_FOUND_0000"),
         call("update_registration_courses", registration_id=reg, add_course_ids=[addable], drop_course_ids=[held[0]],
              payment_id=reg_method),
         call("get_registration_details", registration_id=reg)],
        # Payments: an unsaved method, a fractional amount, a negative one (recorded as is).
        [call("pay_registration", registration_id=reg, payment={"payment_id": "ZZ_NOT_FOUND_0000", "amount": 10}),
         call("pay_registration", registration_id=reg, payment={"payment_id": reg_method, "amount": 12.5}),
         call("pay_registration", registration_id=reg, payment={"payment_id": reg_method, "amount": -40})],
        # Times Python's int() parses or rejects.
        [call("search_courses", term="2025-SPRING", start_after="9:00"),
         call("search_courses", term="2025-SPRING", start_after="ab-00"),
         call("search_courses", term="2025-SPRING", department=dept, start_after=" 09-0_0", end_before="+17-00"),
         call("search_courses", term="2025-SPRING", department=dept, campus="", day="Monday", open_only=True),
         call("list_courses_by_term", term="1999-WINTER")],
    ]
    if active:
        seqs.append([call("cancel_registration", registration_id=active),
                     call("cancel_registration", registration_id=active)])
    with open(out, "w") as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
