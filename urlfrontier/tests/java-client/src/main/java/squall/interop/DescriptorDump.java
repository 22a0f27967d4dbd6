// Writes the protobuf descriptor that the official urlfrontier-API jar was compiled from, as a
// serialized FileDescriptorSet, to the path given: urlfrontier/proto/urlfrontier-2.5.fds, from
// which squall-urlfrontier's build generates its Rust code (see urlfrontier/proto/README.md).
package squall.interop;

import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import crawlercommons.urlfrontier.Urlfrontier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

public final class DescriptorDump {
  private DescriptorDump() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: DescriptorDump OUTPUT.fds");
      System.exit(2);
    }
    FileDescriptorSet set =
        FileDescriptorSet.newBuilder().addFile(Urlfrontier.getDescriptor().toProto()).build();
    Files.write(Path.of(args[0]), set.toByteArray());
  }
}
