"""Which AWS account a request acts as, and the account and Region inside a Cloud Map ARN.

The testbed needs several accounts without any registration call: an access key of the form ACCOUNT<12 digits> acts
as that account; any other key acts as moto's default account 123456789012 (unless moto's own IAM emulation knows the
key). The secret is never checked, as nothing in the emulator checks signatures."""
from __future__ import annotations

import re
from dataclasses import dataclass

from moto.core import DEFAULT_ACCOUNT_ID
from moto.iam.models import get_account_id_from

ACCESS_KEY_PREFIX = "ACCOUNT"
_ACCESS_KEY = re.compile(rf"^{ACCESS_KEY_PREFIX}(\d{{12}})$")
_ARN = re.compile(r"^arn:[\w-]+:servicediscovery:([\w-]+):(\d{12}):(namespace|service)/([\w-]+)$")

__all__ = ["DEFAULT_ACCOUNT_ID", "Arn", "account_of", "parse_arn", "owner_of"]


def account_of(access_key: str) -> str:
    match = _ACCESS_KEY.match(access_key)
    return match.group(1) if match else get_account_id_from(access_key)


@dataclass(frozen=True)
class Arn:
    region: str
    account: str
    kind: str  # namespace or service
    id: str


def parse_arn(value: str | None) -> Arn | None:
    """The parts of a namespace or service ARN; None for anything else (a plain id)."""
    match = _ARN.match(value or "")
    return Arn(*match.groups()) if match else None


def owner_of(resource) -> str:
    """The account that owns a namespace or service: the one its ARN names (moto builds ARNs from the backend's
    account, and a service always lives in its namespace owner's backend)."""
    return resource.arn.split(":")[4]
