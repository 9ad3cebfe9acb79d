"""The effect of AWS RAM resource shares of Cloud Map namespaces: which accounts a namespace is shared with. Our
controller never calls RAM (platform teams do), so the testbed sets shares through POST/DELETE /_emulator/shares
instead of emulating the RAM API."""
from __future__ import annotations

import re
from typing import Any

_ACCOUNT = re.compile(r"^\d{12}$")

# (owner account, Region, namespace id) → consumer accounts
Key = tuple[str, str, str]


class Shares:
    def __init__(self) -> None:
        self.consumers: dict[Key, set[str]] = {}

    def share(self, key: Key, accounts: list[str]) -> None:
        if key[0] in accounts:
            raise ValueError(f"account {key[0]} owns namespace {key[2]}; it cannot be shared with its owner")
        self.consumers.setdefault(key, set()).update(accounts)

    def unshare(self, key: Key, accounts: list[str] | None) -> None:
        """Stops sharing with `accounts`, or with every account when None."""
        remaining = self.consumers.get(key, set()) - set(accounts if accounts is not None else self.consumers.get(key, ()))
        if remaining:
            self.consumers[key] = remaining
        else:
            self.consumers.pop(key, None)

    def forget(self, key: Key) -> None:
        """A deleted namespace leaves every share (RAM drops deleted resources from resource shares)."""
        self.consumers.pop(key, None)

    def allows(self, key: Key, account: str) -> bool:
        return account in self.consumers.get(key, ())

    def shared_with(self, account: str, region: str) -> list[tuple[str, str]]:
        """(owner, namespace id) of every namespace in `region` shared with `account`, in the order they were shared."""
        return [(owner, ns) for (owner, where, ns), accounts in self.consumers.items() if where == region and account in accounts]

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {"ownerAccount": owner, "region": region, "namespaceId": ns, "withAccounts": sorted(accounts)}
            for (owner, region, ns), accounts in self.consumers.items()
        ]

    def reset(self) -> None:
        self.consumers.clear()


def account_list(body: dict[str, Any], name: str) -> list[str]:
    values = body.get(name)
    if not isinstance(values, list) or not all(isinstance(v, str) and _ACCOUNT.match(v) for v in values):
        raise ValueError(f"{name} must be a list of 12-digit account ids, got {values!r}")
    return values


def account_id(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not _ACCOUNT.match(value):
        raise ValueError(f"{name} must be a 12-digit account id, got {value!r}")
    return value


# The running emulator's shares, read and changed under settings.LOCK.
SHARES = Shares()
