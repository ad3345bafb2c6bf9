// Package store holds what the gateway's replicas must share: the rate
// limits' token buckets, stateless mode's tasks, and which replica owns
// each session and parked call (with the secret the replicas sign their
// forwards with). Memory keeps the buckets in the process (the default:
// one replica, or limits per replica); Redis keeps all of it in a Redis
// server every replica reaches, so a limit holds across all of them and
// any replica serves any request.
//
// The consumers define the small interfaces they need (gatewayauth's
// Buckets, the gateway's TaskStore and SessionOwners); both stores
// satisfy the ones they can.
package store
