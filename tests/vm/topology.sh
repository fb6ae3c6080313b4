# shellcheck shell=bash
# tests/vm/topology.sh: the emulated NUMA topologies, shared by run.sh and
# systemd/run.sh.  np_vm_topology NAME sets:
#   smp            qemu -smp
#   nodecpus[]     each node's cpulist        nodemem   memory per node
#   dist           distance rows ':'-separated, values ','
#   smt            threads per core
#   nnodes ncpus   counts
#   numa[]         the qemu -object/-numa arguments
#   nodecpus_param nodecpus joined with ':' (the np.nodecpus parameter)
# and returns 1 for an unknown name.  An optional second argument is the
# guest's memory in MB (default 2048), split evenly over the nodes.  The same facts are passed to the
# guest as np.* parameters for the scenarios.
np_vm_topology() {
	case $1 in
	2node)
		smp=8,sockets=2,cores=2,threads=2
		nodecpus=(0-3 4-7)
		dist="10,20:20,10"
		smt=2
		;;
	4node)
		# Two sockets, each split into two nodes (like sub-NUMA
		# clustering): 10 local, 12 the other node of the same socket,
		# 20/22 cross-socket.
		smp=16,sockets=2,cores=4,threads=2
		nodecpus=(0-3 4-7 8-11 12-15)
		dist="10,12,20,22:12,10,22,20:20,22,10,12:22,20,12,10"
		smt=2
		;;
	2node-2cpu)
		# One CPU per node, two nodes: with --tcg-threads multi its two
		# vCPU threads do not outnumber a 2-core host (the outcome
		# benchmark's uncontended layout).
		smp=2,sockets=2,cores=1,threads=1
		nodecpus=(0 1)
		dist="10,20:20,10"
		smt=1
		;;
	*) return 1 ;;
	esac
	nnodes=${#nodecpus[@]}
	nodemem=$((${2:-2048} / nnodes))M
	ncpus=${smp%%,*}
	numa=()
	local i j rows row
	IFS=: read -r -a rows <<<"$dist"
	for ((i = 0; i < nnodes; i++)); do
		numa+=(-object "memory-backend-ram,id=m$i,size=$nodemem"
			-numa "node,nodeid=$i,cpus=${nodecpus[i]},memdev=m$i")
	done
	for ((i = 0; i < nnodes; i++)); do
		IFS=, read -r -a row <<<"${rows[i]}"
		for ((j = i + 1; j < nnodes; j++)); do
			numa+=(-numa "dist,src=$i,dst=$j,val=${row[j]}")
		done
	done
	nodecpus_param=$(IFS=:; echo "${nodecpus[*]}")
}
