// DynamoDB Local on 127.0.0.1 only. Its own main has no bind option: Jetty listens on every interface,
// so anyone on the network could read and write the local table. This runs the same server from the
// same command-line arguments, with its Jetty connector bound to the loopback interface before it starts.
// Compiled and run by local/dynamodb_local.py.

import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDBLocalOnLoopback {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        // A private field: if a release renames it, this fails loudly rather than listening everywhere.
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server jetty = (Server) field.get(proxy);
        for (Connector connector : jetty.getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        proxy.start();
        System.err.println("DynamoDB Local on 127.0.0.1 only");
    }
}
