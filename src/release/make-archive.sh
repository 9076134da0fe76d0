#!/usr/bin/env bash
# Makes the release archive TARGET/runjob-VERSION-linux-ARCH.tar.gz from the shaded jar (and the
# same as a wheel, TARGET/runjob-VERSION-py3-none-manylinux_2_17_ARCH.whl: make-wheel.py), run by the
# release profile (mvn -B -DskipTests -Prelease package) with the JDK that runs Maven:
#   runjob-VERSION/bin/runjob          the launcher (runs lib/runjob.jar on runtime/)
#   runjob-VERSION/runtime/            a jlink'd Java runtime: the modules runjob and its agents use
#   runjob-VERSION/lib/runjob.jar      (its class-data archive is made beside it on the first run)
#   runjob-VERSION/install.sh          links runjob into ~/.local/bin, installs the completion
#   runjob-VERSION/share/completion/   bash (runjob.bash) and zsh (runjob.zsh)
#   runjob-VERSION/share/doc/          docs/, and every command's --help as runjob-help.txt
#   runjob-VERSION/{schemas,jobs,examples}, README.md, CHANGELOG.md, LICENSE,
#   NOTICE (the bundled libraries' notices), THIRD-PARTY.txt (each bundled library and its licence;
#   the runtime's own are in runtime/legal/)
# The runtime is also what runjob sends to nodes without java (it carries a RUNJOB-RUNTIME file
# that says so), so nothing is built twice. Usage: make-archive.sh VERSION TARGET_DIR JDK_HOME
set -euo pipefail
version=$1
target=$(cd "$2" && pwd)
jdk=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  *) arch=$(uname -m) ;;
esac
name=runjob-$version
stage=$target/release/$name
rm -rf "$target/release"
mkdir -p "$stage/bin" "$stage/lib" "$stage/share/completion" "$stage/share/doc"

cp "$target/runjob.jar" "$stage/lib/runjob.jar"
# the modules runjob's classes use, and those loaded by name, which jdeps cannot see: jdk.crypto.ec
# (EC and Ed25519 keys for SSH); an agent's modules come with them (NodeRuntime.MODULES)
modules=$("$jdk/bin/jdeps" --ignore-missing-deps --print-module-deps --multi-release 17 "$stage/lib/runjob.jar")
modules="$modules,jdk.crypto.ec,java.logging,java.xml,jdk.unsupported"
"$jdk/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=0 \
  --generate-cds-archive --output "$stage/runtime" >/dev/null
echo "The Java runtime of runjob $version (modules: $modules). runjob sends it as it is to nodes without java." \
  > "$stage/runtime/RUNJOB-RUNTIME"

cp "$root/src/release/bin/runjob" "$stage/bin/runjob"
cp "$root/src/release/install.sh" "$stage/install.sh"
chmod 755 "$stage/bin/runjob" "$stage/install.sh"
cp -r "$root/schemas" "$root/jobs" "$root/examples" "$stage/"
find "$stage/examples" -name __pycache__ -prune -exec rm -rf {} +
cp "$root/README.md" "$root/CHANGELOG.md" "$root/LICENSE" "$stage/"
cp -r "$root/docs" "$stage/share/doc/"
cp "$target/generated-sources/license/THIRD-PARTY.txt" "$stage/THIRD-PARTY.txt"
(cd "$target/release" && "$jdk/bin/jar" xf "$stage/lib/runjob.jar" META-INF/NOTICE && mv META-INF/NOTICE "$stage/NOTICE" && rmdir META-INF)

runjob=("$stage/runtime/bin/java" -jar "$stage/lib/runjob.jar")
"${runjob[@]}" completion > "$stage/share/completion/runjob.bash"
cat > "$stage/share/completion/runjob.zsh" <<'ZSH'
# runjob's completion for zsh: the bash script through zsh's bashcompinit
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
source "${0:A:h}/runjob.bash"
ZSH
{
  "${runjob[@]}" --help
  for c in $("${runjob[@]}" --help | sed -n '/^Commands:/,$p' | awk '/^  [a-z]/ {print $1}'); do
    printf '\n'
    "${runjob[@]}" help "$c"
  done
} > "$stage/share/doc/runjob-help.txt"

archive=$target/$name-linux-$arch.tar.gz
tar -czf "$archive.tmp" --owner=0 --group=0 -C "$target/release" "$name"
mv -f "$archive.tmp" "$archive"
echo "runjob: $archive ($(( $(stat -c %s "$archive") >> 20 )) MiB)"
# the same, as a wheel: pip install (or pipx install) of the file gives a runjob command
python3 "$root/src/release/make-wheel.py" "$stage" "$version" "$target"
