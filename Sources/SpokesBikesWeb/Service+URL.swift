import Foundation
import SpokesBikes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Service {
    /// Fetches and decodes `url` each time `get` is called. `file:` URLs are read
    /// directly; other schemes go through `URLSession`. Errors are ``ServiceError``s that
    /// name the URL or file.
    public static func url(_ url: URL) -> Service {
        Service {
            if url.isFileURL {
                return try decode(readFile(at: url.path), source: url.path)
            }
            let data: Data
            do {
                let (body, response) = try await URLSession.shared.data(from: url)
                if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
                    throw ServiceError.requestFailed(url: url.absoluteString, reason: "HTTP status \(http.statusCode)")
                }
                data = body
            } catch let error as ServiceError {
                throw error
            } catch {
                throw ServiceError.requestFailed(url: url.absoluteString, reason: error.localizedDescription)
            }
            return try decode(data, source: url.absoluteString)
        }
    }
}
