# Sourced by the scripts that compile or extract symbols against the package's built modules
# (check-samples-public-api.sh, check-docc.sh, count-public-symbols.sh). Sets:
#   modules      the folder of the debug build's Swift modules
#   clang_flags  the C modules the Swift ones import: those SwiftPM generated a module map for,
#                and those whose package ships one in an include folder
modules=.build/debug/Modules
[ -d "$modules" ] || modules=.build/debug
clang_flags=()
for map in .build/debug/*.build/module.modulemap; do
  [ -e "$map" ] && clang_flags+=(-Xcc "-fmodule-map-file=$map")
done
while IFS= read -r include; do
  clang_flags+=(-Xcc -I -Xcc "$include")
done < <(find .build/checkouts -path '*/include/module.modulemap' -printf '%h\n' 2>/dev/null)
