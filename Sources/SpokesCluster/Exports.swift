// A node's API speaks in the transport's terms (`SocketAddress`, `TransportError`,
// `Runtime`): whoever imports the cluster gets them too.
@_exported import SpokesTransport
// And in the crypto module's (`SHA256`, `HMAC`, `constantTimeEquals`), which the node's
// security types are built on and which its modules and tests use.
@_exported import SpokesCrypto
