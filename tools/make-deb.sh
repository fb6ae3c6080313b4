#!/usr/bin/env bash
# make deb (issue 34, item 4): the Debian package, built with the system's
# own tools from a copy of this tree, so that the work tree is left as it
# is. The copy gets the exact version (tools/version.sh) in its VERSION
# file, as a tarball has it, and a debian/changelog entry with it on top;
# dpkg-buildpackage -us -uc -b builds it there (debian/rules: make all,
# make install PREFIX=/usr INSTALL_CONFIG=no), and lintian checks it when it
# is installed (its remaining tags are overridden in
# debian/numaplace.lintian-overrides, each with its reason).
# Result: BUILD_DIR/deb/numaplace_VERSION_ARCH.deb (and the .changes and
# .buildinfo beside it); the path is the last line printed.
#   DEB_VERSION=V   another version (a test upgrading over a build)
#   DEB_JOBS=N      parallel jobs of the package's make (default 2)
#
#   tools/make-deb.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd -P)
build=${1:-build}
[[ $build == /* ]] || build=$root/$build
for t in dpkg-buildpackage dh; do
	command -v "$t" >/dev/null || {
		echo "make-deb: $t is not installed (apt-get install dpkg-dev debhelper, or make deps)" >&2
		exit 1
	}
done
version=${DEB_VERSION:-$("$root/tools/version.sh")}
out=$build/deb
src=$out/numaplace-$version
rm -rf "$out"
mkdir -p "$src"
# the files of the work tree as git sees them (tracked and new, not ignored:
# what the version describes); a tree without git, all but build/
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$root" && git ls-files -z -co --exclude-standard | xargs -0 tar -cf - --no-recursion) |
		tar -xf - -C "$src"
else
	(cd "$root" && tar -cf - --exclude=./build .) | tar -xf - -C "$src"
fi
echo "$version" >"$src/VERSION"
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo "no git")
{
	printf 'numaplace (%s) UNRELEASED; urgency=medium\n\n' "$version"
	printf '  * Built by make deb from %s (commit %s).\n\n' "$version" "$commit"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$src/debian/control")" \
		"$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}")"
	cat "$root/debian/changelog"
} >"$src/debian/changelog"
echo "make-deb: building numaplace $version in $src"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=${DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
	tail -n 40 "$out/build.log" >&2
	echo "make-deb: dpkg-buildpackage failed; the whole log: $out/build.log" >&2
	exit 1
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=$out/numaplace_${version}_$arch.deb
[[ -f $deb ]] || { echo "make-deb: no $deb after the build (see $out/build.log)" >&2; exit 1; }
if command -v lintian >/dev/null; then
	echo "make-deb: lintian $(basename "$out"/numaplace_"${version}"_"$arch".changes)"
	lintian --fail-on error,warning --display-info --show-overrides \
		"$out/numaplace_${version}_$arch.changes" | tee "$out/lintian.log"
else
	echo "make-deb: lintian is not installed: the package is not checked (apt-get install lintian)"
fi
echo "$deb"
