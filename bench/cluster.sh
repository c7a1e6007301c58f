# bench/cluster.sh: the throwaway cluster of the bench scripts that run one
# of their own (bench/auto-coldstart.sh, bench/sampler-cost.sh), and run and
# sql, which run a command and a statement as the unprivileged user
# (bench/fastpath-measure.sh too).  Sourced, after scripts/lib.sh, not run.
#
# bench_cluster NAME PORT MAX_CONNECTIONS makes a data directory of server
# $pg in a fresh scratch directory NAME, owned by the unprivileged user,
# and sets dir, port (the first free one from PORT) and data.  Its
# postgresql.conf gets the lines on standard input, then the connection
# settings: a socket in dir, no TCP, MAX_CONNECTIONS.  The caller starts it.

run() { as_run_user "$@"; }
sql() { run "$pg/bin/psql" -X -q -At -h "$dir" -p "$port" -d postgres -c "$1"; }

bench_cluster() {
	local name=$1 port_base=$2 max_connections=$3
	ensure_run_user
	dir=$(scratch_dir "$name")
	port=$(free_port "$port_base")
	data="$dir/data"
	run "$pg/bin/initdb" -D "$data" -A trust --no-sync >/dev/null
	{
		cat
		cat <<CONF
port = $port
unix_socket_directories = '$dir'
listen_addresses = ''
max_connections = $max_connections
CONF
	} >>"$data/postgresql.conf"
}
