//go:build !rdma

package verbs

// Without the rdma tag the rdma provider is known but unavailable, so
// `xrcbench list` and `--provider rdma` say what to do.

// RDMABuilt says whether this binary has the rdma provider compiled in.
const RDMABuilt = false

func init() {
	register(&provider{ProviderInfo: ProviderInfo{Name: "rdma",
		Description: "rdma-core's upstream XRC API (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp, ibv_destroy_qp)",
		Reason:      RDMANotBuilt}})
}
