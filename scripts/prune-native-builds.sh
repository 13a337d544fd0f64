#!/bin/sh
# Leaves only the compiled addon of better-sqlite3 in a production node_modules: the C sources, the SQLite
# amalgamation and the object files of the build stay in the Docker build stage. Usage: prune-native-builds.sh DIR
set -eu
module="${1:?node_modules directory}/better-sqlite3"
[ -f "$module/build/Release/better_sqlite3.node" ] || { echo "prune-native-builds: no compiled addon in $module" >&2; exit 1; }
find "$module/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
find "$module/build/Release" -mindepth 1 -maxdepth 1 ! -name better_sqlite3.node -exec rm -rf {} +
rm -rf "$module/deps" "$module/src" "$module/binding.gyp"
