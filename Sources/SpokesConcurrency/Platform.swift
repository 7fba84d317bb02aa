// Spokes builds and runs on Linux only for now: the transport calls Glibc by name and
// uses Linux-only socket flags (SOCK_CLOEXEC, SOCK_NONBLOCK, MSG_NOSIGNAL), and the
// command line reads /proc. README, "Systems", says what was tried and what a port needs.
#if !os(Linux)
#error("Spokes builds on Linux only for now (tried: Swift 6.3.1 on Debian 12); see README, 'Systems'")
#endif
