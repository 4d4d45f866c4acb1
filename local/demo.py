"""Who is who in the demo org ``make seed`` fills: its id and its users, the first its admin. The
seed creates them, and ``make tokens`` and the console's sign-in links name them."""

DEMO_ORG = "demo"
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]


def demo_users() -> tuple[str, str]:
    """The demo org's admin and a member, as the seed creates them."""
    return USERS[0], USERS[1]
