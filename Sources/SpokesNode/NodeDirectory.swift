import FoundationEssentials
import SpokesConcurrency

/// Where a node keeps the files that are its own (its Raft groups, its journal) inside a
/// data directory several nodes may share (`spokes demo`, nodes started by hand with the
/// default one): `nodes/NAME/`. A name is made a safe folder name by writing every
/// character but letters, digits, `-` and `_` as `%XX`, so two names never share a
/// folder and no name leaves `nodes/` (`..`, `/`).
public enum NodeDirectory {
    /// The folder of the node named `node` in `dataDirectory`.
    public static func path(of node: String, in dataDirectory: String) -> String {
        DiskPath.join(DiskPath.join(dataDirectory, "nodes"), folderName(of: node))
    }

    /// `node` as a folder name (see above).
    public static func folderName(of node: String) -> String {
        var folder = ""
        for byte in node.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"):
                folder.append(Character(Unicode.Scalar(byte)))
            default:
                folder += String(printf: "%%%02X", byte)
            }
        }
        return folder.isEmpty ? "%" : folder
    }
}
