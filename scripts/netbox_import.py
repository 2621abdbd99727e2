"""Import an output set's NetBox files into a running NetBox through its web import pages, as a
user uploading each file in the documented order (docs/interop.md, "NetBox"), and print each
step's result.

    python scripts/netbox_import.py out/demo [--url http://127.0.0.1:8000] [--user admin]

The password is read from ``NETBOX_PASSWORD``. Needs ``requests``; exits 1 when a step fails.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import requests

ORDER = [("netbox-manufacturers.csv", "/dcim/manufacturers/import/"),
         ("netbox-device-types.yaml", "/dcim/device-types/import/"),
         ("netbox-device-roles.csv", "/dcim/device-roles/import/"),
         ("netbox-sites.csv", "/dcim/sites/import/"),
         ("netbox-racks.csv", "/dcim/racks/import/"),
         ("netbox-devices.csv", "/dcim/devices/import/"),
         ("netbox-cables.csv", "/dcim/cables/import/")]
ERROR = re.compile(r'class="[^"]*(?:alert-danger|text-danger|invalid-feedback)[^"]*"[^>]*>(.*?)<', re.S)


def csrf_token(session: requests.Session, url: str) -> str:
    page = session.get(url)
    page.raise_for_status()
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def import_all(out: Path, base: str, user: str, password: str) -> bool:
    session = requests.Session()
    login = base + "/login/"
    session.post(login, data={"csrfmiddlewaretoken": csrf_token(session, login), "username": user,
                              "password": password}, headers={"Referer": login})
    ok = True
    for name, path in ORDER:
        started, url = time.perf_counter(), base + path
        with open(out / name, "rb") as upload:
            reply = session.post(url, files={"upload_file": (name, upload)}, headers={"Referer": url}, data={
                "csrfmiddlewaretoken": csrf_token(session, url), "import_method": "upload",
                "format": "yaml" if name.endswith(".yaml") else "csv", "csv_delimiter": "auto"})
        # A successful import redirects to the imported objects; a failed one shows the form again.
        errors = [" ".join(e.split()) for e in ERROR.findall(reply.text)]
        done = bool(reply.history) and reply.history[0].status_code == 302 and not errors
        print(f"{name}: {'imported' if done else 'FAILED'} ({time.perf_counter() - started:.1f} s)")
        for error in errors[:10]:
            print("   ", error[:300])
        ok &= done
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="an output set written by topoopt solve --out")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--user", default="admin")
    args = parser.parse_args()
    return 0 if import_all(args.out, args.url.rstrip("/"), args.user, os.environ["NETBOX_PASSWORD"]) else 1


if __name__ == "__main__":
    sys.exit(main())
