#!/bin/sh
# Installs this unpacked runjob for the current user: links bin/runjob into a directory on PATH
# (~/.local/bin, or the one given) and puts the bash completion where bash-completion loads it.
# Nothing is copied: keep the unpacked directory where it is. Usage: ./install.sh [BIN_DIR]
set -eu
home=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$HOME/.local/bin}
mkdir -p "$bin"
ln -sfn "$home/bin/runjob" "$bin/runjob"
echo "linked $bin/runjob -> $home/bin/runjob"
case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "note: $bin is not on your PATH; add it: export PATH=\"$bin:\$PATH\"" ;;
esac
completions=${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions
mkdir -p "$completions"
cp "$home/share/completion/runjob.bash" "$completions/runjob"
echo "bash completion in $completions/runjob (loaded by bash-completion; without it: source $home/share/completion/runjob.bash)"
echo "zsh: add to ~/.zshrc: source $home/share/completion/runjob.zsh"
"$home/bin/runjob" --version
