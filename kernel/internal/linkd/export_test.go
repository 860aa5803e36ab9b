package linkd

var (
	Socket   = socket
	Starting = starting
)
