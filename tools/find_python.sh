#!/bin/sh
# Print the path of a Python >= 3.12 interpreter, or explain what is needed and fail.
ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
for c in "$PYTHON" python3.12 python3.13 python3; do
  [ -n "$c" ] && ok "$c" && { command -v "$c"; exit 0; }
done
if command -v pyenv >/dev/null 2>&1; then   # pyenv shims fail unless a version is selected: ask pyenv directly
  for v in $(pyenv versions --bare 2>/dev/null | sort -V); do
    p="$(pyenv root)/versions/$v/bin/python3"
    ok "$p" && { echo "$p"; exit 0; }
  done
fi
echo "llmsurgery needs Python >= 3.12 (aidialog does not import on 3.11)." >&2
echo "Install one (e.g. 'pyenv install 3.12') or point PYTHON=/path/to/python3.12 at it, then re-run make." >&2
exit 1
