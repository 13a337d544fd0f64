import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';
import { GIT_REF_NAME, maxSize } from '../repos/repository-names';

@ApiSchema({ name: 'CreateBranchRepoOption' })
export class CreateBranchOption {
  @Field({ field: 'BranchName', type: 'string', required: true, rules: [GIT_REF_NAME, maxSize(100)], description: 'name of the branch to create' })
  new_branch_name: string;

  @Field({ field: 'OldBranchName', type: 'string', rules: [maxSize(100)], description: 'deprecated: use old_ref_name' })
  old_branch_name?: string;

  @Field({
    field: 'OldRefName',
    type: 'string',
    rules: [maxSize(100)],
    description: 'branch, tag or commit the new branch starts from; default: the default branch',
  })
  old_ref_name?: string;
}

@ApiSchema({ name: 'CreateTagOption' })
export class CreateTagOption {
  @Field({ field: 'TagName', type: 'string', required: true, rules: [maxSize(255)] })
  tag_name: string;

  @Field({ field: 'Message', type: 'string', description: 'a message makes an annotated tag, tagged by the caller' })
  message?: string;

  @Field({ field: 'Target', type: 'string', description: 'branch, tag or commit; default: the default branch' })
  target?: string;
}

@ApiSchema({ name: 'Identity' })
export class IdentityWire {
  @ApiProperty({ required: false }) name?: string;
  @ApiProperty({ required: false }) email?: string;
}

@ApiSchema({ name: 'CommitDateOptions' })
export class CommitDateOptionsWire {
  @ApiProperty({ required: false, format: 'date-time' }) author?: string;
  @ApiProperty({ required: false, format: 'date-time' }) committer?: string;
}

/** The fields every file write shares (Forgejo's `FileOptions`). */
export class FileOptions {
  @Field({ field: 'BranchName', type: 'string', rules: [GIT_REF_NAME], description: 'the branch to change; default: the default branch' })
  branch?: string;

  @Field({ field: 'NewBranchName', type: 'string', rules: [GIT_REF_NAME], description: 'commit to this new branch, started from `branch`' })
  new_branch?: string;

  @Field({ field: 'Message', type: 'string', description: 'default: `Add <path>`, `Update <path>` or `Delete <path>`' })
  message?: string;

  @Field({ field: 'Author', type: 'object' })
  @ApiProperty({ type: IdentityWire, required: false })
  author?: IdentityWire;

  @Field({ field: 'Committer', type: 'object' })
  @ApiProperty({ type: IdentityWire, required: false })
  committer?: IdentityWire;

  @Field({ field: 'Dates', type: 'object' })
  @ApiProperty({ type: CommitDateOptionsWire, required: false })
  dates?: CommitDateOptionsWire;

  @Field({ field: 'Signoff', type: 'boolean', description: 'add a Signed-off-by trailer by the committer' })
  signoff?: boolean;
}

@ApiSchema({ name: 'CreateFileOptions' })
export class CreateFileOption extends FileOptions {
  @Field({ field: 'ContentBase64', type: 'string', required: true, description: 'new content, base64' })
  content: string;
}

@ApiSchema({ name: 'UpdateFileOptions' })
export class UpdateFileOption extends FileOptions {
  @Field({ field: 'ContentBase64', type: 'string', required: true, description: 'new content, base64' })
  content: string;

  @Field({ field: 'SHA', type: 'string', required: true, description: 'the blob sha of the file being replaced' })
  sha: string;

  @Field({ field: 'FromPath', type: 'string', description: 'move the file from this path' })
  from_path?: string;
}

@ApiSchema({ name: 'DeleteFileOptions' })
export class DeleteFileOption extends FileOptions {
  @Field({ field: 'SHA', type: 'string', required: true, description: 'the blob sha of the file being deleted' })
  sha: string;
}

@ApiSchema({ name: 'ChangeFileOperation' })
export class ChangeFileOperationWire {
  @ApiProperty({ enum: ['create', 'update', 'delete'] }) operation: string;
  @ApiProperty() path: string;
  @ApiProperty({ required: false, description: 'new content, base64' }) content?: string;
  @ApiProperty({ required: false, description: 'the blob sha of the file, for update and delete' }) sha?: string;
  @ApiProperty({ required: false }) from_path?: string;
}

@ApiSchema({ name: 'ChangeFilesOptions' })
export class ChangeFilesOption extends FileOptions {
  // An array of objects: checked by the service (fields.ts types have no such shape).
  @ApiProperty({ type: [ChangeFileOperationWire], description: 'the changes, in one commit' })
  files: ChangeFileOperationWire[];
}
