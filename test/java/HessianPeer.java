import com.caucho.hessian.io.Hessian2Input;
import com.caucho.hessian.io.Hessian2Output;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;
import org.example.User;

/**
 * The Java side of triple-rpc's hessian2 tests, with Caucho Hessian 4 (Debian's libhessian-java)
 * and protobuf-java. Reads commands from standard input, one a line, and prints one line each:
 *   values            hessian2 of sample values, `label hex` per value, on one line separated by ';'
 *   user              hessian2 of a sample User (nested User, a list shared by reference)
 *   decode HEX        reads one hessian2 value and describes it
 *   shared HEX        reads a User: whether its friend's tags are the very list of its own (a back-reference), and both BigIntegers
 *   request           a whole TripleRequestWrapper for greet(User, int) in hessian4
 *   response HEX      a TripleResponseWrapper: its serializeType, type and described data
 *   args HEX          a TripleRequestWrapper: its serializeType, argTypes and each argument described
 *   exception         a TripleResponseWrapper holding a java.lang.IllegalStateException
 */
public class HessianPeer {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] p = line.split(" ", 2);
            String out;
            try {
                out = run(p[0], p.length > 1 ? p[1] : "");
            } catch (Throwable t) {
                out = "ERROR " + t;
            }
            System.out.println(out);
            System.out.flush();
        }
    }

    static String run(String cmd, String arg) throws Exception {
        switch (cmd) {
            case "values": return values();
            case "user": return hex(hessian(sampleUser()));
            case "decode": return describe(decode(unhex(arg)));
            case "shared": return shared(decode(unhex(arg)));
            case "request": return hex(request());
            case "response": return response(unhex(arg));
            case "args": return args(unhex(arg));
            case "exception": return hex(responseWrapper("hessian4", "org.example.User",
                    hessian(new IllegalStateException("no such user: 7"))));
            default: return "ERROR unknown command " + cmd;
        }
    }

    static User sampleUser() {
        User friend = new User();
        friend.name = "Bob";
        friend.age = -3;
        friend.id = 1L << 40;
        friend.score = 0.5;
        friend.born = new Date(0);
        List<String> tags = new ArrayList<>(Arrays.asList("a", "é", "😀"));
        friend.tags = tags;
        User u = new User();
        u.name = "Ann";
        u.age = 30;
        u.id = 9007199254740993L;
        u.score = 9.75;
        u.active = true;
        u.born = new Date(1700000000123L);
        u.avatar = new byte[] {1, 2, (byte) 255};
        u.tags = tags; // shared: written once, then referenced
        u.attrs = new TreeMap<>(Map.of("x", 1, "y", 2000));
        u.friend = friend;
        return u;
    }

    static String values() throws Exception {
        Object[][] vs = {
            {"int0", 0}, {"int47", 47}, {"intm16", -16}, {"int2047", 2047}, {"intm262144", -262144}, {"intmax", Integer.MAX_VALUE},
            {"long15", 15L}, {"longm2048", -2048L}, {"long262143", 262143L}, {"long2p31", 1L << 31}, {"longmin", Long.MIN_VALUE},
            {"d0", 0.0}, {"d1", 1.0}, {"d127", 127.0}, {"dm32768", -32768.0}, {"d1p5", 1.5}, {"dpi", Math.PI}, {"d12.25", 12.25},
            {"str", "héllo 😀"}, {"strlong", "x".repeat(70000)}, {"bin", new byte[] {0, 1, 2}}, {"binlong", new byte[70000]},
            {"date", new Date(1700000000123L)}, {"dateMin", new Date(1700000040000L)}, {"t", true}, {"n", null},
            {"list", Arrays.asList(1, "two", 3.5)}, {"map", new TreeMap<>(Map.of("k", "v"))},
            {"intmap", new HashMap<>(Map.of(1, "one"))}, {"enum", Thread.State.NEW}, {"short", (short) -5},
            {"byte", (byte) 3}, {"float", 1.5f}, {"char", 'c'},
            {"bigint", new java.math.BigInteger("123456789012345678901234567890")},
            {"bignegint", new java.math.BigInteger("-340282366920938463463374607431768211457")},
            {"bigsmall", java.math.BigInteger.valueOf(-42)}, {"bigzero", java.math.BigInteger.ZERO},
            {"bigdec", new java.math.BigDecimal("-12345678901234567890.125")},
        };
        StringBuilder sb = new StringBuilder();
        for (Object[] v : vs) {
            if (sb.length() > 0) sb.append(';');
            sb.append(v[0]).append(' ').append(hex(hessian(v[1])));
        }
        return sb.toString();
    }

    /** Dubbo's hessian-lite writes a BigDecimal with Caucho's StringValueSerializer (its text in `value`). */
    static final com.caucho.hessian.io.SerializerFactory FACTORY = new com.caucho.hessian.io.SerializerFactory();
    static {
        FACTORY.addFactory(new com.caucho.hessian.io.AbstractSerializerFactory() {
            public com.caucho.hessian.io.Serializer getSerializer(Class cl) {
                return cl == java.math.BigDecimal.class ? new com.caucho.hessian.io.StringValueSerializer() : null;
            }
            public com.caucho.hessian.io.Deserializer getDeserializer(Class cl) {
                return null;
            }
        });
    }

    static byte[] hessian(Object o) throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        Hessian2Output out = new Hessian2Output(bos);
        out.setSerializerFactory(FACTORY);
        out.writeObject(o);
        out.flush();
        return bos.toByteArray();
    }

    static Object decode(byte[] b) throws Exception {
        Hessian2Input in = new Hessian2Input(new ByteArrayInputStream(b));
        return in.readObject();
    }

    /** greet(User user, int times), as Dubbo's WrapRequestPack builds it. */
    static byte[] request() throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bos);
        out.writeString(1, "hessian4");
        out.writeByteArray(2, hessian(sampleUser()));
        out.writeByteArray(2, hessian(3));
        out.writeString(3, "org.example.User");
        out.writeString(3, "int");
        out.flush();
        return bos.toByteArray();
    }

    static byte[] responseWrapper(String st, String type, byte[] data) throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bos);
        out.writeString(1, st);
        out.writeByteArray(2, data);
        out.writeString(3, type);
        out.flush();
        return bos.toByteArray();
    }

    static String response(byte[] b) throws Exception {
        CodedInputStream in = CodedInputStream.newInstance(b);
        String st = "", type = "";
        byte[] data = new byte[0];
        for (int tag; (tag = in.readTag()) != 0; ) {
            switch (tag >>> 3) {
                case 1: st = in.readString(); break;
                case 2: data = in.readByteArray(); break;
                case 3: type = in.readString(); break;
                default: in.skipField(tag);
            }
        }
        return st + " " + type + " " + describe(decode(data));
    }

    /** What a Dubbo Java provider reads from a TripleRequestWrapper, as WrapRequestUnpack does. */
    static String args(byte[] b) throws Exception {
        CodedInputStream in = CodedInputStream.newInstance(b);
        String st = "";
        List<String> types = new ArrayList<>();
        List<String> args = new ArrayList<>();
        for (int tag; (tag = in.readTag()) != 0; ) {
            switch (tag >>> 3) {
                case 1: st = in.readString(); break;
                case 2: args.add(describe(decode(in.readByteArray()))); break;
                case 3: types.add(in.readString()); break;
                default: in.skipField(tag);
            }
        }
        return st + " " + types + " " + String.join(" | ", args);
    }

    static String shared(Object o) {
        User u = (User) o;
        return "friend.tags==tags:" + (u.friend != null && u.tags != null && u.friend.tags == u.tags) + " big:" + u.big
            + " friend.big:" + (u.friend == null ? "-" : String.valueOf(u.friend.big));
    }

    static String describe(Object o) {
        if (o == null) return "null";
        if (o instanceof User) {
            User u = (User) o;
            return "User{name=" + u.name + ",age=" + u.age + ",id=" + u.id + ",score=" + u.score + ",active=" + u.active
                + ",born=" + describe(u.born) + ",avatar=" + describe(u.avatar) + ",tags=" + describe(u.tags)
                + ",attrs=" + describe(u.attrs) + ",friend=" + describe(u.friend) + "}";
        }
        if (o instanceof byte[]) return "bytes" + Arrays.toString((byte[]) o);
        if (o instanceof Date) return "Date(" + ((Date) o).getTime() + ")";
        if (o instanceof List) {
            StringBuilder sb = new StringBuilder("[");
            for (Object x : (List<?>) o) sb.append(sb.length() > 1 ? "," : "").append(describe(x));
            return sb.append("]").toString();
        }
        if (o instanceof Map) {
            StringBuilder sb = new StringBuilder("{");
            for (Map.Entry<?, ?> e : new TreeMap<Object, Object>((Map<?, ?>) o).entrySet()) {
                sb.append(sb.length() > 1 ? "," : "").append(describe(e.getKey())).append('=').append(describe(e.getValue()));
            }
            return sb.append("}").toString();
        }
        if (o instanceof Throwable) return o.getClass().getName() + ":" + ((Throwable) o).getMessage();
        return o.getClass().getSimpleName() + ":" + o;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }
}
