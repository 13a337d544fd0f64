import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CommitUserWire, PayloadCommitVerificationWire } from './content.wire';

@ApiSchema({ name: 'GitObject' })
export class GitObjectWire {
  @ApiProperty() type: string;
  @ApiProperty() sha: string;
  @ApiProperty() url: string;
}

@ApiSchema({ name: 'Reference' })
export class ReferenceWire {
  @ApiProperty() ref: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: GitObjectWire }) object: GitObjectWire;
}

@ApiSchema({ name: 'AnnotatedTagObject' })
export class AnnotatedTagObjectWire {
  @ApiProperty() type: string;
  @ApiProperty() url: string;
  @ApiProperty() sha: string;
}

@ApiSchema({ name: 'AnnotatedTag' })
export class AnnotatedTagWire {
  @ApiProperty() tag: string;
  @ApiProperty() sha: string;
  @ApiProperty() url: string;
  @ApiProperty() message: string;
  @ApiProperty({ type: CommitUserWire }) tagger: CommitUserWire;
  @ApiProperty({ type: AnnotatedTagObjectWire }) object: AnnotatedTagObjectWire;
  @ApiProperty({ type: PayloadCommitVerificationWire }) verification: PayloadCommitVerificationWire;
}

@ApiSchema({ name: 'GitEntry' })
export class GitEntryWire {
  @ApiProperty() path: string;
  @ApiProperty() mode: string;
  @ApiProperty() type: string;
  @ApiProperty({ format: 'int64' }) size: number;
  @ApiProperty() sha: string;
  @ApiProperty({ description: '"" for submodules' }) url: string;
}

@ApiSchema({ name: 'GitTreeResponse' })
export class GitTreeResponseWire {
  @ApiProperty() sha: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [GitEntryWire] }) tree: GitEntryWire[];
  @ApiProperty({ description: 'true when the tree has more entries than one page' }) truncated: boolean;
  @ApiProperty() page: number;
  @ApiProperty() total_count: number;
}

@ApiSchema({ name: 'GitBlobResponse' })
export class GitBlobResponseWire {
  @ApiProperty({ description: 'base64; "" when the blob is larger than MAX_DISPLAY_FILE_SIZE' }) content: string;
  @ApiProperty() encoding: string;
  @ApiProperty() url: string;
  @ApiProperty() sha: string;
  @ApiProperty({ format: 'int64' }) size: number;
}
