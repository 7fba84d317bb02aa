# Where the Swift toolchain is, for the scripts that check a packaged binary runs where
# it cannot be seen (Scripts/test-package, Scripts/test-end-to-end): they mount an empty
# tmpfs over that folder in a mount namespace of their own.

# toolchain_root: the folder holding the Swift toolchain (/opt/swift for
# /opt/swift/usr/bin/swift), or nothing when swift is not found or lives in /usr itself
# (then it cannot be hidden without hiding the system).
toolchain_root() {
  local swift root
  swift=$(command -v swift 2> /dev/null) || return 0
  swift=$(readlink -f "$swift")
  root=${swift%/usr/bin/*}
  if [ "$root" != "$swift" ] && [ -n "$root" ] && [ -d "$root" ]; then echo "$root"; fi
}

# toolchain_hidden: true when no `swift` can be found on a clean PATH (run where the
# toolchain should be hidden).
toolchain_hidden() {
  ! PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v swift > /dev/null
}
