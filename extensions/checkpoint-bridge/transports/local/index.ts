/** The cross-process transport: what the extension wires in when it holds, or lacks, the host role. */
export { ENDPOINT_ENV, endpointFromEnv, type EndpointAddress } from "./address.ts";
export { askRemote, type RemoteAskOptions } from "./client.ts";
export { closePooledConnections, DEFAULT_POOL_IDLE_MS, pooledConnectionCount } from "./pool.ts";
export { connectToHost, type ConnectOptions, type Connected, type HostConnection } from "./connect.ts";
export { closeProcessEndpoint, ensureProcessEndpoint } from "./process-endpoint.ts";
export { remoteAsker, startEndpoint, type EndpointOptions, type LocalEndpoint } from "./server.ts";
