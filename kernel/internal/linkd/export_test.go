package linkd

var (
	Socket   = socket
	Starting = starting
)

var ReadReply = readReply
