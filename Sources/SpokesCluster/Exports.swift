// A node's API speaks in the transport's terms (`SocketAddress`, `TransportError`,
// `MonotonicClock`): whoever imports the cluster gets them too.
@_exported import SpokesTransport
