import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Something about the image folder or an image file that keeps it out of the
/// album, with a hint a person can act on.
///
/// `description` is one log line:
/// `"/var/lib/carouseld/images: image folder does not exist (create it or set [images] path)"`.
public struct AlbumError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the path is to the daemon; the same failure needs a different hint
    /// for the configured folder than for a file named in `[images] files`.
    public enum Subject: Sendable, Equatable {
        /// The folder named by `[images] path`.
        case folder
        /// A file named in `[images] files`.
        case listedFile
        /// A file found in the folder.
        case folderEntry
    }

    public enum Reason: Sendable, Equatable {
        case notFound
        case notADirectory
        case notARegularFile
        case permissionDenied
        /// A symbolic link whose target does not exist.
        case danglingSymlink
        /// The name's bytes are not UTF-8, so it cannot be carried as a Swift
        /// `String` and opened again by that name.
        case nameNotUTF8
        /// `[images] recursive`: folders nested deeper than `limit` levels are not entered.
        case tooDeep(limit: Int)
        /// `[images] recursive`: more than `limit` subfolders; this and later ones are not entered.
        case tooManyFolders(limit: Int)
        /// Any other failure; `call` names the system call.
        case systemCall(call: String, errno: Int32)
    }

    public let path: String
    public let subject: Subject
    public let reason: Reason

    public init(path: String, subject: Subject, reason: Reason) {
        self.path = path
        self.subject = subject
        self.reason = reason
    }

    /// Maps a failed call's errno to the reason a user understands.
    init(path: String, subject: Subject, failure: SystemCallError) {
        let reason: Reason
        switch failure.errno {
        case ENOENT: reason = .notFound
        case ENOTDIR: reason = subject == .folder ? .notADirectory : .notFound
        case EACCES, EPERM: reason = .permissionDenied
        default: reason = .systemCall(call: failure.call, errno: failure.errno)
        }
        self.init(path: path, subject: subject, reason: reason)
    }

    /// What went wrong, without the path or the hint.
    public var message: String {
        switch (subject, reason) {
        case (.folder, .notFound): return "image folder does not exist"
        case (_, .notFound): return "no such file"
        case (_, .notADirectory): return "not a directory"
        case (_, .notARegularFile): return "not a regular file (a directory, device or pipe)"
        case (.folder, .permissionDenied): return "permission denied on the image folder"
        case (_, .permissionDenied): return "permission denied"
        case (_, .danglingSymlink): return "symbolic link to a file that does not exist"
        case (_, .nameNotUTF8): return "file name is not valid UTF-8"
        case let (_, .tooDeep(limit)):
            return "more than \(limit) levels below the image folder; this folder and any other that deep are not shown"
        case let (_, .tooManyFolders(limit)):
            return "more than \(limit) subfolders; this one and the ones after it are not shown"
        case let (_, .systemCall(call, code)):
            return "\(call) failed: \(errnoDescription(code)) (errno \(code))"
        }
    }

    /// What to do about it, when there is something to say.
    public var hint: String? {
        switch (subject, reason) {
        case (.folder, .notFound):
            return "create it or set [images] path"
        case (.folder, .notADirectory):
            return "set [images] path to a folder of images, or list the files in [images] files"
        case (.folder, .permissionDenied):
            return "the daemon's user needs read and search (r-x) permission on it; check its mode and owner"
        case (.listedFile, .notFound):
            return "fix the name or remove it from [images] files"
        case (.listedFile, .notARegularFile):
            return "list only image files in [images] files"
        case (_, .permissionDenied):
            return "the daemon's user needs read permission on the file and search (x) permission on its folders"
        case (_, .danglingSymlink):
            return "fix or remove the link"
        case (_, .nameNotUTF8):
            return "rename the file"
        case (_, .tooDeep), (_, .tooManyFolders):
            return "flatten the folders, or point [images] path at a smaller tree"
        case (_, .systemCall("inotify_add_watch", ENOSPC)):
            return "the system's inotify watch limit is reached; raise the sysctl fs.inotify.max_user_watches"
        case (_, .systemCall("inotify_init1", EMFILE)):
            return "the system's inotify instance limit is reached; raise the sysctl fs.inotify.max_user_instances"
        case (_, .systemCall(_, ENOMEM)):
            return "the system is out of memory"
        default:
            return nil
        }
    }

    public var description: String {
        guard let hint else { return "\(path): \(message)" }
        return "\(path): \(message) (\(hint))"
    }
}
