from cpctl.cli import run

run()
