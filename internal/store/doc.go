// Package store holds what the gateway's replicas must share: today the
// rate limits' token buckets. Memory keeps them in the process (the
// default: one replica, or limits per replica); Redis keeps them in a
// Redis server every replica reaches, so a limit holds across all of them.
//
// The consumers define the small interfaces they need (gatewayauth's
// Buckets); both stores satisfy them.
package store
