#!/usr/bin/env python3
"""The __DOMAIN__ domain's environment, served over MCP (docs/remote-domains.md). Stdlib only.
REPLACE: this file is the environment. Swap the lending library below (its tables, generator
and tools) for your own, keeping the shape: `generate(split, seed)` builds the seeded tables,
each tool is a deterministic function of (tables, arguments), and a tool fails by raising.

A lending library: find a member by email, show a member or a book, lend a book, take it
back, or hand over to a person. State is three tables keyed by id:
  members  member_id -> {name, email, status ("active" | "suspended"), joined_on}
  books    book_id -> {title, author, year, copies, on_loan, reference_only}
  loans    loan_id -> {member_id, book_id, title, borrowed_on, due_on, returned_on, status ("open" | "returned")}
Dates count from a fixed day (SIM_DATE), never the wall clock; a new loan's id is the largest
one plus one, so a session rebuilt from tracer/state behaves alike.
Run: python3 server.py (stdio), or python3 server.py --http 8800 (http://127.0.0.1:8800/mcp)
"""
import datetime
import os
import random
import sys

# The helper module lives at <project>/remote/tracer_env.py; this file at <project>/domains/__DOMAIN__/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "remote"))
import tracer_env  # noqa: E402
from tracer_env import string  # noqa: E402

SIM_DATE = datetime.date(2025, 3, 3)
LOAN_DAYS, MAX_OPEN_LOANS = 21, 3
TABLES = ("members", "books", "loans")
SIZES = {"train": (80, 80), "eval": (30, 40)}  # (members, books) per split

FIRST = ["Ana", "Bruno", "Chiara", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonah",
         "Kira", "Luca", "Maya", "Nils", "Olga", "Pedro", "Rania", "Sven", "Tara", "Yusuf"]
LAST = ["Lopez", "Brandt", "Costa", "Iyer", "Novak", "Haddad", "Okoro", "Sato", "Ferreira",
        "Lindgren", "Moreau", "Petrov", "Quinn", "Rossi", "Tanaka", "Walsh"]
OPENINGS = ["The Silent", "A Winter", "The Last", "Notes on the", "The Glass", "Under the",
            "The Paper", "A Short History of the", "The Hidden", "Letters from the"]
ENDINGS = ["Orchard", "Harbour", "Lighthouse", "Cartographer", "River", "Observatory",
           "Garden", "Archive", "Mountain", "Clockmaker"]
AUTHORS = ["K. Yamada", "M. Okafor", "L. Brennan", "S. Varga", "A. Lindqvist", "R. Mehta",
           "J. Castillo", "E. Dubois", "T. Nakamura", "C. Abara"]


def _day(delta):
    return (SIM_DATE + datetime.timedelta(days=delta)).isoformat()


def _loans_of(db, member_id, status=None):
    return sorted(k for k, x in db["loans"].items()
                  if x["member_id"] == member_id and status in (None, x["status"]))


def generate(split, seed):
    """The seeded tables of one split: the same split and seed always give the same tables."""
    rng = random.Random(f"__DOMAIN__/{split}/{seed}")
    n_members, n_books = SIZES[split]
    t = {name: {} for name in TABLES}
    titles = rng.sample([f"{o} {e}" for o in OPENINGS for e in ENDINGS], n_books)
    for i, title in enumerate(titles):
        bid = f"B{101 + i}"
        t["books"][bid] = {"book_id": bid, "title": title, "author": rng.choice(AUTHORS),
                           "year": rng.randint(1950, 2024), "copies": rng.randint(1, 5), "on_loan": 0,
                           "reference_only": rng.random() < 0.1}
    book_ids, emails = sorted(t["books"]), set()
    for i in range(n_members):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        mid = f"M{1001 + i}"
        email = f"{first}.{last}@example.com".lower()
        while email in emails:
            email = f"{first}.{last}{rng.randint(2, 99)}@example.com".lower()
        emails.add(email)
        t["members"][mid] = {"member_id": mid, "name": f"{first} {last}", "email": email,
                             "status": "suspended" if rng.random() < 0.1 else "active",
                             "joined_on": _day(-rng.randint(30, 3000))}
        # A few returned loans, then 0 to 3 open ones (as many members at the limit as with none).
        for is_open in [False] * rng.randint(0, 2) + [True] * rng.randint(0, MAX_OPEN_LOANS):
            lendable = [b for b, x in t["books"].items() if x["on_loan"] < x["copies"] and not x["reference_only"]]
            book = t["books"][rng.choice(lendable if is_open else book_ids)]
            borrowed = rng.randint(-40, -1) if is_open else rng.randint(-200, -45)
            lid = f"L{5001 + len(t['loans'])}"
            t["loans"][lid] = {"loan_id": lid, "member_id": mid, "book_id": book["book_id"],
                               "title": book["title"], "borrowed_on": _day(borrowed),
                               "due_on": _day(borrowed + LOAN_DAYS),
                               "returned_on": None if is_open else _day(borrowed + rng.randint(3, LOAN_DAYS)),
                               "status": "open" if is_open else "returned"}
            book["on_loan"] += is_open
    return t


def fork(tables):
    """A session's own copy, made at its first write (Tracer forks for every write it tries). Rows
    hold plain values, so copying each row is enough; use copy.deepcopy if yours nest lists."""
    return {name: {k: dict(row) for k, row in rows.items()} for name, rows in tables.items()}


def load(tables):
    """A state from tables tracer/state returned or an import gave (freshly parsed: no copy)."""
    bad = [name for name in TABLES if not isinstance(tables.get(name), dict)]
    if bad or set(tables) - set(TABLES):
        raise ValueError(f"expected exactly the tables {list(TABLES)} (objects keyed by id)")
    return tables


env = tracer_env.Env("__DOMAIN__", reset=generate, load=load, fork=fork)


def _row(db, table, key, what):
    if key not in db[table]:
        raise ValueError(f"{what} {key} not found")
    return db[table][key]


MEMBER_ID = string("Member id, e.g. 'M1042'.")
BOOK_ID = string("Book id (catalogue number), e.g. 'B117'.")


@env.tool(read_only=True, args={"email": string("The member's email, e.g. 'ana.lopez@example.com'.")},
          description="Find a member's id from their email address (case does not matter). Returns the id alone.")
def find_member_id_by_email(db, email):
    for mid, m in sorted(db["members"].items()):
        if m["email"] == email.strip().lower():
            return mid
    raise ValueError(f"No member has the email {email}")


@env.tool(read_only=True, args={"member_id": MEMBER_ID},
          description="Show a member: name, email, status (active or suspended), the date they joined, and "
                      "the ids of their loans (open and returned).")
def get_member_details(db, member_id):
    return {**_row(db, "members", member_id, "Member"), "loans": _loans_of(db, member_id)}


@env.tool(read_only=True, args={"book_id": BOOK_ID},
          description="Show a book: title, author, year, copies owned, copies on loan, copies available to "
                      "borrow now, and whether it is a reference-only book.")
def get_book_details(db, book_id):
    book = _row(db, "books", book_id, "Book")
    return {**book, "available": book["copies"] - book["on_loan"]}


@env.tool(read_only=False, args={"member_id": MEMBER_ID, "book_id": BOOK_ID},
          description=f"Lend an available copy of a book to an active member who has fewer than "
                      f"{MAX_OPEN_LOANS} open loans; the loan is due {LOAN_DAYS} days from today. Say which book "
                      f"and the due date and get an explicit yes first. Returns the new loan.")
def borrow_book(db, member_id, book_id):
    member, book = _row(db, "members", member_id, "Member"), _row(db, "books", book_id, "Book")
    if member["status"] != "active":
        raise ValueError(f"Member {member_id} is {member['status']} and cannot borrow books")
    if len(_loans_of(db, member_id, "open")) >= MAX_OPEN_LOANS:
        raise ValueError(f"Member {member_id} already has {MAX_OPEN_LOANS} open loans")
    if book["on_loan"] >= book["copies"]:
        raise ValueError(f"No copy of book {book_id} is available")
    lid = f"L{1 + max([int(k[1:]) for k in db['loans']] or [5000])}"
    loan = {"loan_id": lid, "member_id": member_id, "book_id": book_id, "title": book["title"],
            "borrowed_on": _day(0), "due_on": _day(LOAN_DAYS), "returned_on": None, "status": "open"}
    db["loans"][lid] = loan
    book["on_loan"] += 1
    return loan


@env.tool(read_only=False, args={"loan_id": string("Loan id, e.g. 'L5012'.")},
          description="Take back the book of an open loan; the copy becomes available again. Say which book "
                      "and get an explicit yes first. Returns the closed loan: id, title, dates and status.")
def return_book(db, loan_id):
    loan = _row(db, "loans", loan_id, "Loan")
    if loan["status"] != "open":
        raise ValueError(f"Loan {loan_id} is already returned")
    loan["status"], loan["returned_on"] = "returned", _day(0)
    db["books"][loan["book_id"]]["on_loan"] -= 1
    # No book id in the answer: Tracer reads an id a write's answer shows first as one it made.
    return {k: loan[k] for k in ("loan_id", "title", "borrowed_on", "due_on", "returned_on", "status")}


@env.tool(read_only=True, args={"summary": string("A short summary of what the member needs.")},
          description="Hand the conversation to a human librarian, with a summary of the member's issue. Only "
                      "when the member asks for a person or the request cannot be handled with these tools and "
                      "the policy.")
def transfer_to_human_agents(db, summary):
    return "Transfer successful"


if __name__ == "__main__":
    tracer_env.main(env)
