#!/usr/bin/env sh
# Set up a development environment from nothing: Graphviz's `dot` (apt, when root),
# a virtual environment in .venv, and topoopt installed editable with its dev extra.
set -eu
if ! command -v dot >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing Graphviz (dot) with apt-get" >&2
    apt-get update -qq && apt-get install -y -qq --no-install-recommends graphviz >/dev/null
  else
    echo "bootstrap: warning: Graphviz 'dot' is missing and cannot be installed without root;" \
         "topoopt will write .dot files but no SVG drawings" >&2
  fi
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
  touch .venv/.installed
fi
