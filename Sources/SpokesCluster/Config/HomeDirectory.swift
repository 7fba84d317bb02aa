import FoundationEssentials
import Glibc

/// `~` in a path, as every Unix tool reads it: `$HOME`, and the password file only when
/// `HOME` is unset or empty. The one place a path's `~` is expanded (data directory,
/// secret file, `--data-directory`, `--config`).
public enum HomeDirectory {
    /// The home directory: `HOME` from `environment`, else the password file's entry for
    /// this user.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        return passwordFileHome(of: nil) ?? "/"
    }

    /// `path` with a leading `~` or `~/` replaced by the home directory, and `~user/`
    /// by that user's home from the password file; any other path unchanged.
    public static func expand(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard path.hasPrefix("~") else { return path }
        let slash = path.firstIndex(of: "/") ?? path.endIndex
        let user = path[path.index(after: path.startIndex)..<slash]
        let home: String
        if user.isEmpty {
            home = self.path(environment: environment)
        } else if let found = passwordFileHome(of: String(user)) {
            home = found
        } else {
            return path
        }
        let rest = path[slash...]
        return home.hasSuffix("/") && rest.hasPrefix("/") ? home + rest.dropFirst() : home + rest
    }

    /// The home directory of `user` (nil: this process's user) in the password file.
    private static func passwordFileHome(of user: String?) -> String? {
        let entry = user.map { getpwnam($0) } ?? getpwuid(getuid())
        guard let entry, let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
