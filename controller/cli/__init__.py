
from __future__ import annotations

import argparse
from typing import TypeAlias

#: What a subcommand's ``register`` adds its parser to.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
