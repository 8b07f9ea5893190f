#!/usr/bin/env python3
"""Tracer's own pharmacy domain, served over MCP (docs/remote-domains.md). Standard library only.

A chain of pharmacies fills prescriptions for its patients: look a patient up by email,
show their profile and prescriptions, order a refill (paid with a saved card), cancel a
refill the pharmacy has not filled yet, change the home address, move a prescription to
another branch, or hand over to a person.

State is five tables, each keyed by its id; rows a patient owns carry `patient_id`:
  patients         patient_id -> profile (name, email, date_of_birth, phone, address, allergies)
  payment_methods  payment_method_id -> {patient_id, brand, last4}
  prescriptions    prescription_id -> {patient_id, medication, refills_left, expires_on, status, pharmacy_id, ...}
  refill_orders    order_id -> {patient_id, prescription_id, medication_name, status, payment_method_id, amount, ...}
  pharmacies       pharmacy_id -> branch (name, street, city, state, zip, hours)

`tracer/reset {split, seed}` draws a database from random.Random("pharmacy/<split>/<seed>"):
120 patients for train, 40 for eval, the same six branches in both. Dates are relative to
a fixed simulation day (SIM_DATE); nothing reads the wall clock. Every fact a tool needs is
in the tables (a new order's id is the largest existing one plus one), so a session rebuilt
from `tracer/state` behaves exactly like the original.

Run: python3 server.py            (stdio)
     python3 server.py --http 8800 (http://127.0.0.1:8800/mcp)
"""
import datetime
import functools
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "remote"))
import tracer_env  # noqa: E402
from tracer_env import string  # noqa: E402

SIM_DATE = datetime.date(2025, 6, 2)
TABLES = ("patients", "payment_methods", "prescriptions", "refill_orders", "pharmacies")
SIZES = {"train": 120, "eval": 40}

FIRST = ["Amara", "Bilal", "Chen", "Dalia", "Emil", "Farah", "Goran", "Hana", "Ines", "Jonas",
         "Kemal", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Samir", "Tove",
         "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zofia", "Arjun", "Beatriz", "Dmitri", "Elif",
         "Felix", "Greta", "Hugo", "Ivy", "Kofi", "Leila", "Marek", "Noor", "Pablo", "Sunita"]
LAST = ["Abara", "Bergstrom", "Castillo", "Dubois", "Eriksen", "Fontaine", "Gupta", "Haddad",
        "Ito", "Jovanovic", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
        "Quispe", "Rahman", "Santos", "Tanaka", "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zeller",
        "Almeida", "Brennan", "Costa", "Demir"]
STREETS = ["Alder Court", "Birch Lane", "Cedar Avenue", "Dogwood Drive", "Elm Street", "Fir Road",
           "Grove Terrace", "Hawthorn Way", "Iris Place", "Juniper Lane", "Linden Boulevard",
           "Maple Row", "Oak Hollow", "Pine Crescent", "Quarry Road", "Willow Bend"]
LINE2 = ["", "", "", "", "Apt 2B", "Apt 11", "Unit 4", "Suite 300", "Floor 3"]
CITIES = [("Springfield", "IL", "627"), ("Madison", "WI", "537"), ("Boulder", "CO", "803"),
          ("Durham", "NC", "277"), ("Eugene", "OR", "974"), ("Burlington", "VT", "054"),
          ("Tucson", "AZ", "857"), ("Ann Arbor", "MI", "481"), ("Savannah", "GA", "314")]
BRANDS = ["Visa", "Mastercard", "American Express", "Discover"]
ALLERGIES = ["penicillin", "sulfa drugs", "aspirin", "latex", "codeine", "iodine"]
PRESCRIBERS = ["Dr. Helen Aoki", "Dr. Marcus Obi", "Dr. Sofia Reyes", "Dr. Tomas Lind",
               "Dr. Grace Mensah", "Dr. Ravi Iyer", "Dr. Clara Novak", "Dr. Owen Hart"]
# name, strength, form, quantity, directions, copay, controlled
MEDICATIONS = [
    ("Lisinopril", "10 mg", "tablet", 30, "Take 1 tablet by mouth once daily.", 4.00, False),
    ("Atorvastatin", "20 mg", "tablet", 30, "Take 1 tablet by mouth at bedtime.", 6.50, False),
    ("Metformin", "500 mg", "tablet", 60, "Take 1 tablet by mouth twice daily with meals.", 4.00, False),
    ("Levothyroxine", "50 mcg", "tablet", 30, "Take 1 tablet every morning on an empty stomach.", 8.25, False),
    ("Amlodipine", "5 mg", "tablet", 30, "Take 1 tablet by mouth once daily.", 5.00, False),
    ("Omeprazole", "20 mg", "capsule", 30, "Take 1 capsule before breakfast.", 9.75, False),
    ("Sertraline", "50 mg", "tablet", 30, "Take 1 tablet by mouth once daily.", 7.40, False),
    ("Albuterol", "90 mcg", "inhaler", 1, "Inhale 2 puffs every 4 to 6 hours as needed.", 25.00, False),
    ("Losartan", "50 mg", "tablet", 30, "Take 1 tablet by mouth once daily.", 5.60, False),
    ("Montelukast", "10 mg", "tablet", 30, "Take 1 tablet by mouth every evening.", 11.20, False),
    ("Fluticasone", "50 mcg", "nasal spray", 1, "Use 2 sprays in each nostril once daily.", 15.90, False),
    ("Insulin glargine", "100 units/mL", "pen", 5, "Inject 20 units under the skin at bedtime.", 35.00, False),
    ("Escitalopram", "10 mg", "tablet", 30, "Take 1 tablet by mouth once daily.", 8.10, False),
    ("Gabapentin", "300 mg", "capsule", 90, "Take 1 capsule by mouth three times daily.", 12.30, False),
    ("Zolpidem", "10 mg", "tablet", 30, "Take 1 tablet at bedtime as needed for sleep.", 14.00, True),
    ("Alprazolam", "0.5 mg", "tablet", 60, "Take 1 tablet up to twice daily as needed.", 10.50, True),
    ("Methylphenidate", "10 mg", "tablet", 60, "Take 1 tablet twice daily before meals.", 22.80, True),
    ("Tramadol", "50 mg", "tablet", 40, "Take 1 tablet every 6 hours as needed for pain.", 9.90, True),
]
PHARMACIES = {
    "PH-01": {"name": "Tracer Pharmacy Downtown", "street": "100 Main Street", "city": "Springfield", "state": "IL", "zip": "62701", "hours": "08:00-21:00"},
    "PH-02": {"name": "Tracer Pharmacy Lakeside", "street": "42 Shore Drive", "city": "Madison", "state": "WI", "zip": "53703", "hours": "09:00-19:00"},
    "PH-03": {"name": "Tracer Pharmacy Flatirons", "street": "7 Canyon Road", "city": "Boulder", "state": "CO", "zip": "80302", "hours": "08:00-20:00"},
    "PH-04": {"name": "Tracer Pharmacy Ninth Street", "street": "915 Ninth Street", "city": "Durham", "state": "NC", "zip": "27705", "hours": "00:00-24:00"},
    "PH-05": {"name": "Tracer Pharmacy Riverside", "street": "3 River Road", "city": "Eugene", "state": "OR", "zip": "97401", "hours": "09:00-18:00"},
    "PH-06": {"name": "Tracer Pharmacy Old Town", "street": "21 Church Street", "city": "Savannah", "state": "GA", "zip": "31401", "hours": "08:30-20:30"},
}


# ---------------------------------------------------------------- the generator

def _unique(rng, taken, make):
    while True:
        value = make(rng)
        if value not in taken:
            taken.add(value)
            return value


def _day(delta):
    return (SIM_DATE + datetime.timedelta(days=delta)).isoformat()


def generate(split, seed):
    rng = random.Random(f"pharmacy/{split}/{seed}")
    t = {name: {} for name in TABLES}
    for pid, row in PHARMACIES.items():
        t["pharmacies"][pid] = {"pharmacy_id": pid, **row}
    branches = sorted(PHARMACIES)
    ids, emails = set(), set()
    next_order = 50001
    for _ in range(SIZES[split]):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        patient_id = _unique(rng, ids, lambda r: f"PT-{r.randint(10000, 99999)}")
        email = _unique(rng, emails, lambda r: f"{first}.{last}{r.randint(1, 99)}@example.com".lower())
        city, state, zip3 = rng.choice(CITIES)
        t["patients"][patient_id] = {
            "patient_id": patient_id,
            "name": f"{first} {last}",
            "email": email,
            "date_of_birth": datetime.date(rng.randint(1940, 2005), rng.randint(1, 12), rng.randint(1, 28)).isoformat(),
            "phone": f"555-{rng.randint(200, 989)}-{rng.randint(1000, 9999)}",
            "address": {"line1": f"{rng.randint(1, 9899)} {rng.choice(STREETS)}", "line2": rng.choice(LINE2),
                        "city": city, "state": state, "zip": f"{zip3}{rng.randint(0, 99):02d}"},
            "allergies": sorted(rng.sample(ALLERGIES, rng.choice([0, 0, 1, 1, 2]))),
        }
        cards, methods = set(), []
        for _ in range(rng.choice([1, 1, 2, 2, 3])):
            brand, last4 = _unique(rng, cards, lambda r: (r.choice(BRANDS), f"{r.randint(0, 9999):04d}"))
            pm = _unique(rng, ids, lambda r: f"pm_{r.randint(100000, 999999)}")
            t["payment_methods"][pm] = {"payment_method_id": pm, "patient_id": patient_id, "brand": brand, "last4": last4}
            methods.append(pm)
        home = rng.choice(branches)
        for med in rng.sample(MEDICATIONS, rng.randint(1, 4)):
            name, strength, form, qty, directions, copay, controlled = med
            rx = _unique(rng, ids, lambda r: f"RX-{r.randint(100000, 999999)}")
            written = rng.randint(-520, -7)
            expired = written + 365 < 0
            t["prescriptions"][rx] = {
                "prescription_id": rx, "patient_id": patient_id,
                "medication_name": name, "strength": strength, "form": form, "quantity": qty,
                "directions": directions, "controlled": controlled, "copay": copay,
                "prescriber": rng.choice(PRESCRIBERS),
                "written_on": _day(written), "expires_on": _day(written + 365),
                "refills_left": rng.choice([0, 0, 1, 2, 3, 5]),
                "status": "expired" if expired else ("on_hold" if rng.random() < 0.12 else "active"),
                "pharmacy_id": home if rng.random() < 0.85 else rng.choice(branches),
            }
            rows = []
            if rng.random() < 0.4:
                rows.append((rng.choice(["picked_up", "picked_up", "cancelled"]), rng.randint(max(written, -120), -3)))
            if t["prescriptions"][rx]["status"] == "active" and rng.random() < 0.3:
                rows.append((rng.choice(["processing", "processing", "ready_for_pickup"]), rng.randint(-2, 0)))
            for status, day in rows:
                oid = f"ORD-{next_order}"
                next_order += 1
                t["refill_orders"][oid] = {
                    "order_id": oid, "patient_id": patient_id, "prescription_id": rx, "medication_name": name,
                    "pharmacy_id": t["prescriptions"][rx]["pharmacy_id"], "status": status,
                    "payment_method_id": rng.choice(methods), "amount": copay, "placed_on": _day(day),
                    "cancel_reason": "no longer needed" if status == "cancelled" else None,
                }
    return t


@functools.lru_cache(maxsize=16)
def _generated(split, seed):
    return json.dumps(generate(split, seed))


def reset(split, seed):
    return json.loads(_generated(split, seed))


def fork(tables):
    return json.loads(json.dumps(tables))  # the state is plain JSON: faster than copy.deepcopy


def load(tables):
    missing = [name for name in TABLES if not isinstance(tables.get(name), dict)]
    if missing:
        raise ValueError(f"tables {missing} missing or not objects keyed by id")
    extra = sorted(set(tables) - set(TABLES))
    if extra:
        raise ValueError(f"unknown tables {extra}")
    return fork(tables)


env = tracer_env.Env("pharmacy", reset=reset, load=load, fork=fork)


# ---------------------------------------------------------------- helpers

def _row(db, table, key, what):
    row = db[table].get(key)
    if row is None:
        raise ValueError(f"{what} {key} not found")
    return row


def _owned(db, table, field, value):
    """The keys of `table`'s rows whose `field` is `value`, sorted."""
    return sorted(k for k, row in db[table].items() if row[field] == value)


def _patient_view(db, patient):
    pid = patient["patient_id"]
    return {
        **patient,
        "payment_methods": [{f: db["payment_methods"][k][f] for f in ("payment_method_id", "brand", "last4")}
                            for k in _owned(db, "payment_methods", "patient_id", pid)],
        "prescriptions": _owned(db, "prescriptions", "patient_id", pid),
        "refill_orders": _owned(db, "refill_orders", "patient_id", pid),
    }


def _prescription_view(db, rx):
    orders = _owned(db, "refill_orders", "prescription_id", rx["prescription_id"])
    return {
        **rx,
        "pharmacy_name": db["pharmacies"].get(rx["pharmacy_id"], {}).get("name"),
        "refill_orders": [{f: db["refill_orders"][k][f] for f in ("order_id", "status", "placed_on", "amount",
                                                                   "payment_method_id")} for k in orders],
    }


def _open_order(db, rx_id):
    open_ids = [oid for oid, o in db["refill_orders"].items()
                if o["prescription_id"] == rx_id and o["status"] in ("processing", "ready_for_pickup")]
    return min(open_ids) if open_ids else None


def _expired(rx):
    return rx["status"] == "expired" or rx["expires_on"] < SIM_DATE.isoformat()


# ---------------------------------------------------------------- the tools

PATIENT_ID = string("Patient id, e.g. 'PT-48213'.")
RX_ID = string("Prescription number as on the label, e.g. 'RX-204518'.")


@env.tool(read_only=True, args={"email": string("The patient's email, e.g. 'lena.walsh12@example.com'.")},
          description="Find a patient's id from their email address (case does not matter). Returns the id alone.")
def find_patient_id_by_email(db, email):
    for pid, p in db["patients"].items():
        if p["email"].lower() == email.strip().lower():
            return pid
    raise ValueError("Patient not found")


@env.tool(read_only=True, args={"patient_id": PATIENT_ID},
          description="Show a patient's profile: name, email, date of birth, phone, home address, allergies, "
                      "saved payment methods (id, card brand, last four digits), and the ids of their "
                      "prescriptions and refill orders.")
def get_patient_details(db, patient_id):
    return _patient_view(db, _row(db, "patients", patient_id, "Patient"))


@env.tool(read_only=True, args={"prescription_id": RX_ID},
          description="Show a prescription: medication, strength, form, quantity, directions, prescriber, "
                      "dates written and expiring, refills left, status (active, on_hold, expired), whether it "
                      "is a controlled substance, the copay per fill, the branch that holds it, and its refill "
                      "orders with their status.")
def get_prescription_details(db, prescription_id):
    return _prescription_view(db, _row(db, "prescriptions", prescription_id, "Prescription"))


@env.tool(read_only=True, args={},
          description="List the pharmacy's branches: id, name, street address, city, state, zip and opening hours.")
def list_pharmacies(db):
    return [row for _, row in sorted(db["pharmacies"].items())]


@env.tool(read_only=False,
          args={"prescription_id": RX_ID,
                "payment_method_id": string("Id of one of the patient's saved payment methods, e.g. 'pm_381920'.")},
          description="Order a refill of an active, unexpired prescription that has refills left and no open "
                      "refill order; the copay is charged to one of the patient's saved payment methods and one "
                      "refill is used. The branch holding the prescription fills it. State the medication, "
                      "copay and card and get an explicit yes first. Returns the new refill order.")
def refill_prescription(db, prescription_id, payment_method_id):
    rx = _row(db, "prescriptions", prescription_id, "Prescription")
    if _expired(rx):
        raise ValueError(f"Prescription {prescription_id} expired on {rx['expires_on']}; the prescriber must write a new one")
    if rx["status"] != "active":
        raise ValueError(f"Prescription {prescription_id} is {rx['status']} and cannot be refilled")
    if rx["refills_left"] <= 0:
        raise ValueError(f"Prescription {prescription_id} has no refills left")
    open_id = _open_order(db, prescription_id)
    if open_id:
        raise ValueError(f"Prescription {prescription_id} already has an open refill order {open_id}")
    pm = _row(db, "payment_methods", payment_method_id, "Payment method")
    if pm["patient_id"] != rx["patient_id"]:
        raise ValueError(f"Payment method {payment_method_id} does not belong to patient {rx['patient_id']}")
    number = 1 + max([int(k.split("-")[1]) for k in db["refill_orders"]] or [50000])
    oid = f"ORD-{number}"
    order = {"order_id": oid, "patient_id": rx["patient_id"], "prescription_id": prescription_id,
             "medication_name": rx["medication_name"], "pharmacy_id": rx["pharmacy_id"],
             "status": "processing", "payment_method_id": payment_method_id, "amount": rx["copay"],
             "placed_on": SIM_DATE.isoformat(), "cancel_reason": None}
    db["refill_orders"][oid] = order
    rx["refills_left"] -= 1
    return order


@env.tool(read_only=False,
          args={"order_id": string("Refill order id, e.g. 'ORD-50017'."),
                "reason": string("Why the patient cancels, e.g. 'no longer needed'.")},
          description="Cancel a refill order that is still 'processing' (not yet filled). The copay is refunded "
                      "to the card it was charged to and the refill goes back to the prescription. Orders ready "
                      "for pickup, picked up or cancelled cannot be cancelled. Confirm the order and reason and "
                      "get an explicit yes first. Returns the cancelled order.")
def cancel_refill_order(db, order_id, reason):
    order = _row(db, "refill_orders", order_id, "Refill order")
    if order["status"] != "processing":
        raise ValueError(f"Refill order {order_id} is {order['status']} and can no longer be cancelled")
    if not reason.strip():
        raise ValueError("A reason is required to cancel a refill order")
    order["status"], order["cancel_reason"] = "cancelled", reason.strip()
    rx = db["prescriptions"].get(order["prescription_id"])
    if rx is not None:
        rx["refills_left"] += 1
    return order


@env.tool(read_only=False,
          args={"patient_id": PATIENT_ID,
                "line1": string("Street line, e.g. '48 Juniper Lane'."),
                "line2": string("Apartment, unit or suite, or '' when none."),
                "city": string("City, e.g. 'Madison'."),
                "state": string("Two-letter state code, e.g. 'WI'."),
                "zip": string("Five-digit zip code, e.g. '53703'.")},
          description="Change a patient's home address. Get the complete new address, read it back and get an "
                      "explicit yes first. Returns the updated profile.")
def update_patient_address(db, patient_id, line1, line2, city, state, zip):
    patient = _row(db, "patients", patient_id, "Patient")
    if not line1.strip() or not city.strip():
        raise ValueError("The street line and the city are required")
    if not re.fullmatch(r"[A-Z]{2}", state):
        raise ValueError(f"State must be a two-letter code such as 'WI', not {state!r}")
    if not re.fullmatch(r"\d{5}", zip):
        raise ValueError(f"Zip code must be five digits, not {zip!r}")
    new = {"line1": line1.strip(), "line2": line2.strip(), "city": city.strip(), "state": state, "zip": zip}
    if new == patient["address"]:
        raise ValueError("The new address is the same as the current one")
    patient["address"] = new
    return _patient_view(db, patient)


@env.tool(read_only=False,
          args={"prescription_id": RX_ID, "pharmacy_id": string("Id of the receiving branch, e.g. 'PH-03'.")},
          description="Move an active prescription to another branch of the pharmacy, which fills its future "
                      "refills. Not possible while a refill order of it is open. State the branch and get an "
                      "explicit yes first. Returns the updated prescription.")
def transfer_prescription(db, prescription_id, pharmacy_id):
    rx = _row(db, "prescriptions", prescription_id, "Prescription")
    branch = _row(db, "pharmacies", pharmacy_id, "Pharmacy")
    if _expired(rx) or rx["status"] != "active":
        status = "expired" if _expired(rx) else rx["status"]
        raise ValueError(f"Prescription {prescription_id} is {status}; only active prescriptions can be transferred")
    if rx["pharmacy_id"] == pharmacy_id:
        raise ValueError(f"Prescription {prescription_id} is already at {branch['name']}")
    open_id = _open_order(db, prescription_id)
    if open_id:
        raise ValueError(f"Refill order {open_id} of prescription {prescription_id} is still open")
    rx["pharmacy_id"] = pharmacy_id
    return _prescription_view(db, rx)


@env.tool(read_only=True, args={"summary": string("A short summary of what the patient needs.")},
          description="Hand the conversation to a human pharmacist or agent, with a summary of the patient's "
                      "issue. Only when the patient asks for a person, or the request cannot be handled with "
                      "these tools and the policy.")
def transfer_to_human_agents(db, summary):
    return "Transfer successful"


if __name__ == "__main__":
    tracer_env.main(env)
