"""Who is who in the demo org ``make seed`` fills: its id and its users, the first its admin. The
seed creates them, and ``make tokens`` and the console's sign-in links name them."""

DEMO_ORG = "demo"
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
# The demo org's small tree of units, parents first: (unit_id, name, parent_id or None for the root).
UNITS = [
    ("engineering", "Engineering", None),
    ("platform", "Platform", "engineering"),
    ("web", "Web", "engineering"),
    ("sales", "Sales", None),
    ("support", "Support", None),
]
# Each user's unit, in the order of USERS (the admin, alice, in the root); users beyond it: the root.
PLACES = ["root", "platform", "platform", "web", "web", "engineering", "sales", "sales", "support", "support"]


def unit_of(user_id: str) -> str:
    return PLACES[USERS.index(user_id)] if user_id in USERS else "root"


def demo_users() -> tuple[str, str]:
    """The demo org's admin and a member, as the seed creates them."""
    return USERS[0], USERS[1]
