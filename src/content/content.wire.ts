import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

/** Forgejo's `PayloadUser`: a commit's author or committer as git recorded them. */
@ApiSchema({ name: 'PayloadUser' })
export class PayloadUserWire {
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty({ description: 'the Anvil user with this e-mail, else empty' }) username: string;
}

/** Anvil does not verify signatures yet: every commit reads as not signed (Forgejo's answer for unsigned commits). */
@ApiSchema({ name: 'PayloadCommitVerification' })
export class PayloadCommitVerificationWire {
  @ApiProperty() verified: boolean;
  @ApiProperty() reason: string;
  @ApiProperty() signature: string;
  @ApiProperty({ type: PayloadUserWire, nullable: true }) signer: PayloadUserWire | null;
  @ApiProperty() payload: string;
}

@ApiSchema({ name: 'PayloadCommit' })
export class PayloadCommitWire {
  @ApiProperty({ description: 'sha1 hash of the commit' }) id: string;
  @ApiProperty() message: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: PayloadUserWire }) author: PayloadUserWire;
  @ApiProperty({ type: PayloadUserWire }) committer: PayloadUserWire;
  @ApiProperty({ type: PayloadCommitVerificationWire, nullable: true }) verification: PayloadCommitVerificationWire | null;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ type: [String], nullable: true }) added: string[] | null;
  @ApiProperty({ type: [String], nullable: true }) removed: string[] | null;
  @ApiProperty({ type: [String], nullable: true }) modified: string[] | null;
}

/** Forgejo's `Branch`, with the protection of the branch as its viewer meets it. */
@ApiSchema({ name: 'Branch' })
export class BranchWire {
  @ApiProperty() name: string;
  @ApiProperty({ type: PayloadCommitWire }) commit: PayloadCommitWire;
  @ApiProperty() protected: boolean;
  @ApiProperty({ format: 'int64' }) required_approvals: number;
  @ApiProperty() enable_status_check: boolean;
  @ApiProperty({ type: [String] }) status_check_contexts: string[];
  @ApiProperty() user_can_push: boolean;
  @ApiProperty() user_can_merge: boolean;
  @ApiProperty() effective_branch_protection_name: string;
}

@ApiSchema({ name: 'CommitMeta' })
export class CommitMetaWire {
  @ApiProperty() url: string;
  @ApiProperty() sha: string;
  @ApiProperty({ format: 'date-time' }) created: string;
}

@ApiSchema({ name: 'TagArchiveDownloadCount' })
export class TagArchiveDownloadCountWire {
  @ApiProperty({ format: 'int64' }) zip: number;
  @ApiProperty({ format: 'int64' }) tar_gz: number;
}

@ApiSchema({ name: 'Tag' })
export class TagWire {
  @ApiProperty() name: string;
  @ApiProperty() message: string;
  @ApiProperty({ description: 'the tag object of an annotated tag, else the commit' }) id: string;
  @ApiProperty({ type: CommitMetaWire }) commit: CommitMetaWire;
  @ApiProperty() zipball_url: string;
  @ApiProperty() tarball_url: string;
  @ApiProperty({ type: TagArchiveDownloadCountWire }) archive_download_count: TagArchiveDownloadCountWire;
}

@ApiSchema({ name: 'CommitUser' })
export class CommitUserWire {
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty() date: string;
}

@ApiSchema({ name: 'RepoCommit' })
export class RepoCommitWire {
  @ApiProperty() url: string;
  @ApiProperty({ type: CommitUserWire }) author: CommitUserWire;
  @ApiProperty({ type: CommitUserWire }) committer: CommitUserWire;
  @ApiProperty() message: string;
  @ApiProperty({ type: CommitMetaWire }) tree: CommitMetaWire;
  @ApiProperty({ type: PayloadCommitVerificationWire, nullable: true }) verification: PayloadCommitVerificationWire | null;
}

@ApiSchema({ name: 'CommitAffectedFiles' })
export class CommitAffectedFilesWire {
  @ApiProperty() filename: string;
  @ApiProperty({ description: 'added, modified, removed' }) status: string;
}

@ApiSchema({ name: 'CommitStats' })
export class CommitStatsWire {
  @ApiProperty({ format: 'int64' }) total: number;
  @ApiProperty({ format: 'int64' }) additions: number;
  @ApiProperty({ format: 'int64' }) deletions: number;
}

@ApiSchema({ name: 'Commit' })
export class CommitWire {
  @ApiProperty() url: string;
  @ApiProperty() sha: string;
  @ApiProperty({ format: 'date-time' }) created: string;
  @ApiProperty() html_url: string;
  @ApiProperty({ type: RepoCommitWire }) commit: RepoCommitWire;
  @ApiProperty({ type: UserWire, nullable: true }) author: UserWire | null;
  @ApiProperty({ type: UserWire, nullable: true }) committer: UserWire | null;
  @ApiProperty({ type: [CommitMetaWire] }) parents: CommitMetaWire[];
  @ApiProperty({ type: [CommitAffectedFilesWire], required: false }) files?: CommitAffectedFilesWire[] | null;
  @ApiProperty({ type: CommitStatsWire, required: false }) stats?: CommitStatsWire | null;
}

@ApiSchema({ name: 'FileLinksResponse' })
export class FileLinksWire {
  @ApiProperty({ nullable: true, type: String }) self: string | null;
  @ApiProperty({ nullable: true, type: String }) git: string | null;
  @ApiProperty({ nullable: true, type: String }) html: string | null;
}

/** Forgejo's `ContentsResponse`: a file (with its content), a directory, a symlink or a submodule. */
@ApiSchema({ name: 'ContentsResponse' })
export class ContentsWire {
  @ApiProperty() name: string;
  @ApiProperty() path: string;
  @ApiProperty() sha: string;
  @ApiProperty() last_commit_sha: string;
  @ApiProperty({ description: '`file`, `dir`, `symlink` or `submodule`' }) type: string;
  @ApiProperty({ format: 'int64' }) size: number;
  @ApiProperty({ nullable: true, type: String, description: '`base64` when `content` is set' }) encoding: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'base64; null for directories, symlinks, submodules and files above MAX_DISPLAY_FILE_SIZE' })
  content: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'the target of a symlink' }) target: string | null;
  @ApiProperty({ nullable: true, type: String }) url: string | null;
  @ApiProperty({ nullable: true, type: String }) html_url: string | null;
  @ApiProperty({ nullable: true, type: String }) git_url: string | null;
  @ApiProperty({ nullable: true, type: String }) download_url: string | null;
  @ApiProperty({ nullable: true, type: String }) submodule_git_url: string | null;
  @ApiProperty({ type: FileLinksWire }) _links: FileLinksWire;
}

@ApiSchema({ name: 'FileCommitResponse' })
export class FileCommitWire {
  @ApiProperty() url: string;
  @ApiProperty() sha: string;
  @ApiProperty({ format: 'date-time' }) created: string;
  @ApiProperty() html_url: string;
  @ApiProperty({ type: CommitUserWire }) author: CommitUserWire;
  @ApiProperty({ type: CommitUserWire }) committer: CommitUserWire;
  @ApiProperty({ type: [CommitMetaWire] }) parents: CommitMetaWire[];
  @ApiProperty() message: string;
  @ApiProperty({ type: CommitMetaWire }) tree: CommitMetaWire;
}

@ApiSchema({ name: 'FileResponse' })
export class FileResponseWire {
  @ApiProperty({ type: ContentsWire, nullable: true }) content: ContentsWire | null;
  @ApiProperty({ type: FileCommitWire }) commit: FileCommitWire;
  @ApiProperty({ type: PayloadCommitVerificationWire }) verification: PayloadCommitVerificationWire;
}

@ApiSchema({ name: 'FileDeleteResponse' })
export class FileDeleteResponseWire {
  @ApiProperty({ type: Object, nullable: true, description: 'always null' }) content: null;
  @ApiProperty({ type: FileCommitWire }) commit: FileCommitWire;
  @ApiProperty({ type: PayloadCommitVerificationWire }) verification: PayloadCommitVerificationWire;
}

@ApiSchema({ name: 'FilesResponse' })
export class FilesResponseWire {
  @ApiProperty({ type: [ContentsWire], description: 'one entry per changed file; null for deleted files' }) files: (ContentsWire | null)[];
  @ApiProperty({ type: FileCommitWire }) commit: FileCommitWire;
  @ApiProperty({ type: PayloadCommitVerificationWire }) verification: PayloadCommitVerificationWire;
}
