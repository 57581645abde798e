#!/usr/bin/env bash
# Renders every manual page in man/ as `man` shows it (80 columns, UTF-8)
# and fails on any warning groff or man prints, naming the page. Needs
# man-db and groff-base (scripts/setup.sh).
#
#   scripts/check-man.sh
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
for page in man/*.[158]; do
  # man's own checks (it runs groff with -ww), then groff alone on the
  # man macros: both say nothing about a clean page.
  from_man=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null || echo "man exited with status $?")
  from_groff=$(groff -man -ww -z "$page" 2>&1 || echo "groff exited with status $?")
  warnings=$(printf '%s\n%s' "$from_man" "$from_groff" | sed '/^$/d')
  if [ -n "$warnings" ]; then
    echo "man: $page renders with warnings:" >&2
    printf '%s\n' "$warnings" | sed 's/^/  /' >&2
    failed=$((failed + 1))
  else
    echo "man: $page renders cleanly"
    passed=$((passed + 1))
  fi
done
if ((passed + failed == 0)); then
  echo "man: no pages in man/" >&2
  exit 1
fi
echo "man pages: $passed passed, $failed failed"
((failed == 0))
