<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Actions</name>
    <message>
        <location filename="../window_actions.py" line="22"/>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="26"/>
        <source>Open a .safetensors file, index.json or model folder (Ctrl+O)</source>
        <translation>打开 .safetensors 文件、index.json 或模型文件夹 (Ctrl+O)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="28"/>
        <source>Open &amp;Folder…</source>
        <translation>打开文件夹(&amp;F)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="30"/>
        <source>&amp;Cast &amp;&amp; Save…</source>
        <translation>转换并保存(&amp;C)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="34"/>
        <source>Cast float tensors to the target dtype and save (Ctrl+S)</source>
        <translation>把浮点张量转换为目标 dtype 并保存 (Ctrl+S)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="36"/>
        <source>&amp;Quantize…</source>
        <translation>量化(&amp;Q)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="39"/>
        <source>Measure what FP8, INT8, INT4, NVFP4 and MXFP4 would cost, then save one (Ctrl+Shift+Q)</source>
        <translation>先测量 FP8、INT8、INT4、NVFP4 和 MXFP4 各自的代价，再保存其中一种 (Ctrl+Shift+Q)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="47"/>
        <source>Compare with &amp;Reference…</source>
        <translation>与参考文件对比(&amp;R)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="52"/>
        <source>Open a second checkpoint as reference and show per-tensor max |Δ| (or Shift+drop it onto the window)</source>
        <translation>打开另一个 checkpoint 作为参考，显示每个张量的最大 |Δ|（也可按住 Shift 拖放到窗口上）</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="58"/>
        <source>Clear Reference</source>
        <translation>清除参考</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="59"/>
        <source>&amp;Export Table…</source>
        <translation>导出表格(&amp;E)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="62"/>
        <source>Save the table as CSV, or as the JSON list --json writes</source>
        <translation>把表格保存为 CSV，或保存为 list --json 输出的 JSON</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="64"/>
        <source>Export &amp;Report…</source>
        <translation>导出报告(&amp;R)…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="66"/>
        <source>Save the comparison or the last cast&apos;s report as JSON</source>
        <translation>把对比结果或上次转换的报告保存为 JSON</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="68"/>
        <source>&amp;Filter Tensors</source>
        <translation>筛选张量(&amp;F)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="71"/>
        <source>Only &amp;Differing Tensors</source>
        <translation>仅显示 dtype 不一致的张量(&amp;D)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="76"/>
        <source>&amp;Modules</source>
        <translation>模块(&amp;M)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="81"/>
        <source>Group tensors by module prefix (Ctrl+T)</source>
        <translation>按模块前缀分组显示张量 (Ctrl+T)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="82"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="84"/>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>快捷键(&amp;K)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="86"/>
        <source>&amp;About Checkpoint Inspector</source>
        <translation>关于 Checkpoint Inspector(&amp;A)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="91"/>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="95"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="109"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="113"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="129"/>
        <source>{dtype} — from config.json</source>
        <translation>{dtype} — 来自 config.json</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="142"/>
        <source>your choice</source>
        <translation>您的选择</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="143"/>
        <source>from this checkpoint&apos;s config.json</source>
        <translation>来自此检查点的 config.json</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="144"/>
        <source>the default (no config.json names one)</source>
        <translation>默认值（没有 config.json 指定）</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="147"/>
        <source>The dtype the model uses ({why}); tensors in another float dtype are flagged</source>
        <translation>模型使用的 dtype（{why}）；其他浮点 dtype 的张量会被标出</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="155"/>
        <source>Main toolbar</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="162"/>
        <source> Model dtype: </source>
        <translation> 模型 dtype：</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="166"/>
        <source>The dtype the model uses; tensors in another float dtype are flagged</source>
        <translation>模型使用的 dtype；浮点 dtype 与之不同的张量会被标出</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="197"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="204"/>
        <source>Clear List</source>
        <translation>清空列表</translation>
    </message>
</context>
<context>
    <name>CastDialog</name>
    <message>
        <location filename="../cast_dialog.py" line="88"/>
        <source>Dequantize &amp; save</source>
        <translation>反量化并保存</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="90"/>
        <source>Cast &amp; save</source>
        <translation>转换并保存</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="101"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="108"/>
        <source>e.g. *.LayerNorm.* *inv_freq  (glob patterns, kept as is)</source>
        <translation>例如 *.LayerNorm.* *inv_freq（glob 通配符，匹配的张量保持原 dtype）</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="110"/>
        <source>Target dtype:</source>
        <translation>目标 dtype：</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="112"/>
        <source>Save as:</source>
        <translation>另存为：</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="114"/>
        <source>Save into folder:</source>
        <translation>保存到文件夹：</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="119"/>
        <source>+ F32 norms</source>
        <translation>+ F32 归一化层</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="121"/>
        <source>Add the fp32-norms globs: norms, rotary inv_freq and MoE routers, which models keep in F32 on purpose</source>
        <translation>加入 fp32-norms 模式：归一化层、旋转位置编码 inv_freq 和 MoE 路由，模型有意将它们保持为 F32</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="129"/>
        <source>Keep dtype of:</source>
        <translation>保持原 dtype：</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="138"/>
        <source>Dequantize &amp;&amp; Save</source>
        <translation>反量化并保存</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="140"/>
        <source>Cast &amp;&amp; Save</source>
        <translation>转换并保存</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="165"/>
        <source>Cannot dequantize: {why}.</source>
        <translation>无法反量化：{why}。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="168"/>
        <source>Choose where to save.</source>
        <translation>请选择保存位置。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="174"/>
        <source>The output would overwrite the checkpoint being read; choose another name.</source>
        <translation>输出会覆盖正在读取的 checkpoint，请换一个文件名。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="180"/>
        <source>Folder {folder} does not exist.</source>
        <translation>文件夹 {folder} 不存在。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="194"/>
        <source>{n} of {total} tensors will be cast to {target}</source>
        <translation>{total} 个张量中有 {n} 个将转换为 {target}</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="199"/>
        <source>{n} kept by pattern</source>
        <translation>{n} 个按规则保持原 dtype</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="201"/>
        <source>{n} kept (not a float)</source>
        <translation>{n} 个保持不变（非浮点）</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="205"/>
        <source>{n} quantized weights ({scheme}) are dequantized to {target}: their scales are left out and config.json loses its quantization_config.</source>
        <translation>{n} 个量化权重（{scheme}）将反量化为 {target}：不写出其缩放因子，config.json 中的 quantization_config 被移除。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="221"/>
        <source>The existing output will be replaced.</source>
        <translation>已有的输出文件将被替换。</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="233"/>
        <source>Save shards into folder</source>
        <translation>把分片保存到文件夹</translation>
    </message>
    <message>
        <location filename="../cast_dialog.py" line="239"/>
        <source>Save cast checkpoint</source>
        <translation>保存转换后的 checkpoint</translation>
    </message>
</context>
<context>
    <name>Controller</name>
    <message>
        <location filename="../controller.py" line="124"/>
        <source>Opening {name}…</source>
        <translation>正在打开 {name}…</translation>
    </message>
    <message>
        <location filename="../controller.py" line="153"/>
        <source>The reference {name} was cleared: it was chosen for the previous checkpoint.</source>
        <translation>参考文件 {name} 已清除：它是为上一个 checkpoint 选择的。</translation>
    </message>
    <message>
        <location filename="../controller.py" line="158"/>
        <source>Compare with {name} again</source>
        <translation>再次与 {name} 对比</translation>
    </message>
    <message>
        <location filename="../open_messages.py" line="24"/>
        <source>{kind} checkpoint: showing the model&apos;s {n} tensors (prefix {prefix} taken off); {left} optimizer and other tensors are left out, and a cast leaves them out too.</source>
        <translation>{kind} 检查点：显示模型的 {n} 个张量（已去掉前缀 {prefix}）；{left} 个优化器及其他张量未显示，转换时也不会写入。</translation>
    </message>
    <message>
        <location filename="../open_messages.py" line="37"/>
        <source>Show everything</source>
        <translation>显示全部</translation>
    </message>
    <message>
        <location filename="../open_messages.py" line="44"/>
        <source>Note: {text}.</source>
        <translation>注意：{text}。</translation>
    </message>
    <message>
        <location filename="../controller.py" line="114"/>
        <source>{job}: waits for the running job</source>
        <translation>{job}：等待正在运行的任务结束</translation>
    </message>
    <message>
        <location filename="../controller.py" line="171"/>
        <source>Could not open {what}</source>
        <translation>无法打开 {what}</translation>
    </message>
    <message>
        <location filename="../controller.py" line="173"/>
        <source> — still showing the previous checkpoint.</source>
        <translation> — 仍显示之前的 checkpoint。</translation>
    </message>
    <message>
        <location filename="../controller.py" line="182"/>
        <source>Open which checkpoint?</source>
        <translation>打开哪个 checkpoint？</translation>
    </message>
    <message>
        <location filename="../controller.py" line="183"/>
        <source>This folder holds several checkpoints. Open:</source>
        <translation>此文件夹包含多个 checkpoint。打开：</translation>
    </message>
    <message>
        <location filename="../controller.py" line="250"/>
        <source>Opening reference {name}…</source>
        <translation>正在打开参考文件 {name}…</translation>
    </message>
    <message>
        <location filename="../controller.py" line="272"/>
        <source>Comparing with {name}</source>
        <translation>正在与 {name} 对比</translation>
    </message>
    <message>
        <location filename="../controller.py" line="276"/>
        <source>Comparison cancelled.</source>
        <translation>对比已取消。</translation>
    </message>
    <message>
        <location filename="../controller.py" line="283"/>
        <source>Could not open the reference {what}</source>
        <translation>无法打开参考文件 {what}</translation>
    </message>
    <message>
        <location filename="../controller.py" line="293"/>
        <source>Comparison failed: {why}</source>
        <translation>对比失败：{why}</translation>
    </message>
    <message>
        <location filename="../controller.py" line="312"/>
        <source>Compared with {ref}: {n} differing (worst max |Δ| {worst}), {equal} equal</source>
        <translation>已与 {ref} 对比：{n} 个张量有差异（最大 |Δ| 为 {worst}），{equal} 个完全相同</translation>
    </message>
    <message>
        <location filename="../controller.py" line="317"/>
        <source>; {n} only in one file or shaped differently</source>
        <translation>；{n} 个只存在于其中一个文件或形状不同</translation>
    </message>
    <message>
        <location filename="../controller.py" line="322"/>
        <source>{sentence}.</source>
        <translation>{sentence}。</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="85"/>
        <source>Casting to {target}</source>
        <translation>正在转换为 {target}</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="97"/>
        <source>Saved {name} (cast of a checkpoint no longer shown).</source>
        <translation>已保存 {name}（转换的 checkpoint 已不在当前窗口中）。</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="101"/>
        <location filename="../cast_controller.py" line="133"/>
        <source>Open the saved file</source>
        <translation>打开保存的文件</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="114"/>
        <source>Saved {name} in {secs} s: 1 tensor cast to {target}, {lossless} of them lossless.</source>
        <translation>已保存 {name}，用时 {secs} 秒：1 个张量转换为 {target}，其中 {lossless} 个无损。</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="120"/>
        <source>Saved {name} in {secs} s: {n} tensors cast to {target}, {lossless} of them lossless.</source>
        <translation>已保存 {name}，用时 {secs} 秒：{n} 个张量转换为 {target}，其中 {lossless} 个无损。</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="142"/>
        <source>Cast failed</source>
        <translation>转换失败</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="143"/>
        <source>Could not save {what}</source>
        <translation>无法保存 {what}</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="146"/>
        <source>Nothing was written.</source>
        <translation>没有写入任何文件。</translation>
    </message>
    <message>
        <location filename="../cast_controller.py" line="153"/>
        <source>Cast cancelled: nothing was written.</source>
        <translation>转换已取消：没有写入任何文件。</translation>
    </message>
</context>
<context>
    <name>DetailsController</name>
    <message>
        <location filename="../details_controller.py" line="159"/>
        <source>not a float</source>
        <translation>非浮点</translation>
    </message>
    <message>
        <location filename="../details_controller.py" line="161"/>
        <source>already {dtype}</source>
        <translation>已是 {dtype}</translation>
    </message>
    <message>
        <location filename="../details_controller.py" line="163"/>
        <source>kept by a pattern, or a format torch cannot cast exactly</source>
        <translation>被规则保留，或是 torch 无法精确转换的格式</translation>
    </message>
    <message>
        <location filename="../details_controller.py" line="167"/>
        <source>written unchanged as {dtype} ({why})</source>
        <translation>按原样写为 {dtype}（{why}）</translation>
    </message>
    <message>
        <location filename="../details_controller.py" line="201"/>
        <source>Could not read the saved file: {why}</source>
        <translation>无法读取保存的文件：{why}</translation>
    </message>
</context>
<context>
    <name>DetailsPane</name>
    <message>
        <location filename="../details_pane.py" line="43"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="44"/>
        <source>DType</source>
        <translation>dtype</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="45"/>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="46"/>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="47"/>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="48"/>
        <source>Range</source>
        <translation>范围</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="49"/>
        <source>Mean ± std</source>
        <translation>均值 ± 标准差</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="50"/>
        <source>NaN / inf</source>
        <translation>NaN / inf</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="51"/>
        <source>Storage</source>
        <translation>存储</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="52"/>
        <source>Param ID</source>
        <translation>参数 ID</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="53"/>
        <source>Cast</source>
        <translation>转换</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="54"/>
        <source>Reference</source>
        <translation>参考</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="61"/>
        <location filename="../details_pane.py" line="112"/>
        <source>No tensor selected</source>
        <translation>未选择张量</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="96"/>
        <source>Histogram</source>
        <translation>直方图</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="97"/>
        <source>Values</source>
        <translation>数值</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="98"/>
        <source>Heatmap</source>
        <translation>热力图</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="133"/>
        <source>{dtype} (burn: {burn})</source>
        <translation>{dtype}（burn：{burn}）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="141"/>
        <location filename="../details_pane.py" line="233"/>
        <source>{shape} · {n} values</source>
        <translation>{shape} · {n} 个值</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="152"/>
        <source>from {start:,}, a strided view (strides {s}), {size}</source>
        <translation>自 {start:,} 起，跨步视图（strides {s}），{size}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="157"/>
        <source>computing…</source>
        <translation>计算中…</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="158"/>
        <source>not cast yet (Ctrl+S)</source>
        <translation>尚未转换 (Ctrl+S)</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="160"/>
        <source>Values (computing…)</source>
        <translation>数值（计算中…）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="184"/>
        <source>Values ({dtype})</source>
        <translation>数值（{dtype}）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="190"/>
        <source>unavailable: {reason}</source>
        <translation>不可用：{reason}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="192"/>
        <source>Values: unavailable</source>
        <translation>数值：不可用</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="215"/>
        <source>codes used {used} of {possible} · saturated {saturated} · scales {scales} · {bad} scales 0, negative, inf or NaN</source>
        <translation>已用编码 {used}/{possible} · 饱和 {saturated} · 缩放因子 {scales} · {bad} 个缩放因子为 0、负数、inf 或 NaN</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="250"/>
        <source>written unchanged as {dtype} ({why})</source>
        <translation>按原样写为 {dtype}（{why}）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="256"/>
        <source>lossless (every value exact)</source>
        <translation>无损（所有值完全一致）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="258"/>
        <source>every value overflowed ({n})</source>
        <translation>所有值均溢出（{n} 个）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="262"/>
        <source>rel. err max {rel}, typical (mean) {mean} · max abs. err {abs}</source>
        <translation>相对误差最大 {rel}，典型（均值）{mean} · 最大绝对误差 {abs}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="326"/>
        <source>Relative error, {pct}% exact</source>
        <translation>相对误差，{pct}% 完全一致</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="265"/>
        <source>overflow {o} · underflow {u} · NaN {n}</source>
        <translation>上溢 {o} · 下溢 {u} · NaN {n}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="277"/>
        <source>(reference stores {dtype})</source>
        <translation>（参考文件存为 {dtype}）</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="279"/>
        <source>not in the reference</source>
        <translation>参考文件中没有</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="281"/>
        <source>only in the reference</source>
        <translation>只在参考文件中</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="283"/>
        <source>shape differs: {a} here, {b} in reference</source>
        <translation>形状不同：此处为 {a}，参考文件为 {b}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="287"/>
        <source>equal values</source>
        <translation>数值相同</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="289"/>
        <source>within tolerance: max |Δ| {d}</source>
        <translation>在容差内：最大 |Δ| {d}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="294"/>
        <source>max |Δ| {abs} · max rel. {rel}</source>
        <translation>最大 |Δ| {abs} · 最大相对差 {rel}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="301"/>
        <source>original</source>
        <translation>原始</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="302"/>
        <source>saved</source>
        <translation>保存后</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="304"/>
        <source>Values before / after the cast</source>
        <translation>转换前 / 后的数值</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="306"/>
        <source>, every {n}th value</source>
        <translation>，每 {n} 个取一个</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="313"/>
        <source>No finite values to draw</source>
        <translation>没有可绘制的有限值</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="319"/>
        <source> · not drawn: {what}</source>
        <translation> · 未绘制：{what}</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="329"/>
        <source>Every changed value overflowed ({n}): no finite error</source>
        <translation>所有改变的值都溢出了（{n} 个）：没有有限误差</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="334"/>
        <source>1 value overflowed; the others are exact</source>
        <translation>1 个值溢出；其余完全一致</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="336"/>
        <source>{n} values overflowed; the others are exact</source>
        <translation>{n} 个值溢出；其余完全一致</translation>
    </message>
    <message>
        <location filename="../details_pane.py" line="339"/>
        <source>100% exact: every saved value equals the original</source>
        <translation>100% 一致：所有保存值都等于原始值</translation>
    </message>
    <message>
        <location filename="../details_controller.py" line="105"/>
        <source>dequantized</source>
        <translation>反量化后</translation>
    </message>
</context>
<context>
    <name>Drops</name>
    <message>
        <location filename="../drops.py" line="64"/>
        <source>{n} items were dropped; drop one checkpoint (or two to compare them: the first is opened, the second is the reference).</source>
        <translation>拖入了 {n} 个项目；请拖入一个检查点（或两个以进行比较：打开第一个，第二个作为参考）。</translation>
    </message>
</context>
<context>
    <name>EmptyPage</name>
    <message>
        <location filename="../empty_page.py" line="12"/>
        <source>Drop a .safetensors file, a PyTorch .pt/.bin/.ckpt, a burn .bpk, a .gguf, an index.json or a model folder</source>
        <translation>拖入 .safetensors 文件、PyTorch .pt/.bin/.ckpt、burn .bpk、.gguf、index.json 或模型文件夹</translation>
    </message>
    <message>
        <location filename="../empty_page.py" line="34"/>
        <source>or use File ▸ Open (Ctrl+O). Tensors whose dtype differs from the model dtype are highlighted; Cast &amp; Save (Ctrl+S) fixes them and plots the precision lost.
Shift+drop a second checkpoint to compare against it.</source>
        <translation>或使用 文件 ▸ 打开 (Ctrl+O)。dtype 与模型 dtype 不一致的张量会被高亮；转换并保存 (Ctrl+S) 可修正它们并绘制精度损失。
按住 Shift 拖入另一个 checkpoint 可与之对比。</translation>
    </message>
    <message>
        <location filename="../empty_page.py" line="43"/>
        <source>Open…</source>
        <translation>打开…</translation>
    </message>
    <message>
        <location filename="../empty_page.py" line="65"/>
        <source>Recent</source>
        <translation>最近打开</translation>
    </message>
</context>
<context>
    <name>Export</name>
    <message>
        <location filename="../export_actions.py" line="42"/>
        <source>Could not export {what}</source>
        <translation>无法导出 {what}</translation>
    </message>
    <message>
        <location filename="../export_actions.py" line="46"/>
        <source>Wrote {name}.</source>
        <translation>已写入 {name}。</translation>
    </message>
    <message>
        <location filename="../export_actions.py" line="60"/>
        <source>Export table</source>
        <translation>导出表格</translation>
    </message>
    <message>
        <location filename="../export_actions.py" line="62"/>
        <source>CSV (*.csv);;JSON, as list --json (*.json)</source>
        <translation>CSV (*.csv);;JSON，与 list --json 相同 (*.json)</translation>
    </message>
    <message>
        <location filename="../export_actions.py" line="74"/>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
</context>
<context>
    <name>HeatmapPlot</name>
    <message>
        <location filename="../heatmap_view.py" line="91"/>
        <source>row</source>
        <translation>行</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="92"/>
        <source>column</source>
        <translation>列</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="148"/>
        <source>no finite value</source>
        <translation>没有有限值</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="150"/>
        <source>row {rows}, column {cols}: {v}</source>
        <translation>第 {rows} 行，第 {cols} 列：{v}</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="152"/>
        <source>rows {rows}, columns {cols}: mean {v}</source>
        <translation>第 {rows} 行，第 {cols} 列：均值 {v}</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="154"/>
        <source>rows {rows}, columns {cols}: largest |x| is {v}</source>
        <translation>第 {rows} 行，第 {cols} 列：最大 |x| 为 {v}</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="158"/>
        <source> ({n} NaN or inf left out)</source>
        <translation>（未计入 {n} 个 NaN 或 inf）</translation>
    </message>
</context>
<context>
    <name>HeatmapView</name>
    <message>
        <location filename="../heatmap_view.py" line="48"/>
        <source>Each cell:</source>
        <translation>每个格子：</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="50"/>
        <source>largest |x| of its block</source>
        <translation>其区块中最大的 |x|</translation>
    </message>
    <message>
        <location filename="../heatmap_view.py" line="51"/>
        <source>mean of its block</source>
        <translation>其区块的均值</translation>
    </message>
</context>
<context>
    <name>Help</name>
    <message>
        <location filename="../help_dialogs.py" line="17"/>
        <source>Shift+drop</source>
        <translation>Shift+拖放</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="18"/>
        <source>Compare with the dropped checkpoint as reference</source>
        <translation>以拖入的 checkpoint 作为参考进行对比</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="21"/>
        <source>Esc (in the filter)</source>
        <translation>Esc（在筛选框中）</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="22"/>
        <source>Clear the filter</source>
        <translation>清空筛选</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="25"/>
        <source>Ctrl+C (in the table)</source>
        <translation>Ctrl+C（在表格中）</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="26"/>
        <source>Copy the selected tensor&apos;s name</source>
        <translation>复制所选张量的名称</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="46"/>
        <source>Keyboard Shortcuts</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="54"/>
        <source>About Checkpoint Inspector</source>
        <translation>关于 Checkpoint Inspector</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="58"/>
        <source>See every tensor&apos;s dtype and shape, cast checkpoints bit-identically to PyTorch, and plot the precision lost.</source>
        <translation>查看每个张量的 dtype 和形状，按与 PyTorch 逐位一致的方式转换 checkpoint，并绘制精度损失。</translation>
    </message>
    <message>
        <location filename="../help_dialogs.py" line="65"/>
        <source>MIT License. Documentation: README.md and docs/ of the source distribution;&lt;br&gt;&lt;tt&gt;checkpoint-inspector --help&lt;/tt&gt; for the command line.</source>
        <translation>MIT 许可证。文档：源码包中的 README.md 和 docs/；&lt;br&gt;命令行用法见 &lt;tt&gt;checkpoint-inspector --help&lt;/tt&gt;。</translation>
    </message>
</context>
<context>
    <name>HintPanel</name>
    <message>
        <location filename="../hint_panel.py" line="47"/>
        <source>burn-store fix</source>
        <translation>burn-store 修复方法</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="52"/>
        <location filename="../hint_panel.py" line="110"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="53"/>
        <source>Copy the line to the clipboard</source>
        <translation>把这一行复制到剪贴板</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="83"/>
        <source>{n} tensor ({kinds}) differs from the model dtype {target}.</source>
        <translation>{n} 个张量（{kinds}）与模型 dtype {target} 不一致。</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="85"/>
        <source>{n} tensors ({kinds}) differ from the model dtype {target}.</source>
        <translation>{n} 个张量（{kinds}）与模型 dtype {target} 不一致。</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="95"/>
        <source>&lt;b&gt;PyTorch&lt;/b&gt; &lt;code&gt;load_state_dict&lt;/code&gt; copies each tensor into the parameter&apos;s dtype: they become {target} silently.</source>
        <translation>&lt;b&gt;PyTorch&lt;/b&gt; 的 &lt;code&gt;load_state_dict&lt;/code&gt; 会把每个张量复制到参数的 dtype 中：它们会被静默地转为 {target}。</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="102"/>
        <source>&lt;b&gt;burn-store&lt;/b&gt; keeps the stored dtype, so the model fails with &lt;code&gt;matmul: dtype mismatch&lt;/code&gt;. Fix it there (or cast this file, Ctrl+S):</source>
        <translation>&lt;b&gt;burn-store&lt;/b&gt; 保留文件中的 dtype，模型会报错 &lt;code&gt;matmul: dtype mismatch&lt;/code&gt;。可以在 burn 中这样修复（或转换此文件，Ctrl+S）：</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="119"/>
        <source>&lt;b&gt;config.json&lt;/b&gt;: {key} = {dtype}, but {n} of {total} float tensors are {kinds}. transformers&apos; &lt;code&gt;from_pretrained&lt;/code&gt; casts them to {dtype} silently (the config wins); burn and &lt;code&gt;safe_open&lt;/code&gt; keep {kinds}, and burn&apos;s first matmul with the model&apos;s dtype panics.</source>
        <translation>&lt;b&gt;config.json&lt;/b&gt;：{key} = {dtype}，但 {total} 个浮点张量中有 {n} 个是 {kinds}。transformers 的 &lt;code&gt;from_pretrained&lt;/code&gt; 会静默地把它们转换为 {dtype}（以 config 为准）；burn 和 &lt;code&gt;safe_open&lt;/code&gt; 保持 {kinds}，burn 与模型 dtype 的第一次 matmul 会 panic。</translation>
    </message>
    <message>
        <location filename="../hint_panel.py" line="137"/>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>JobBar</name>
    <message>
        <location filename="../job_bar.py" line="28"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../job_bar.py" line="29"/>
        <source>Stop; nothing partial is left on disk</source>
        <translation>停止；磁盘上不会留下不完整的文件</translation>
    </message>
    <message>
        <location filename="../job_bar.py" line="58"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
</context>
<context>
    <name>LintFinding</name>
    <message>
        <location filename="../lint_texts.py" line="19"/>
        <source>{index} is not a readable index</source>
        <translation>{index} 不是可读取的索引</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="20"/>
        <source>{index} names {shard}, which is not in the folder</source>
        <translation>{index} 列出了 {shard}，但文件夹中没有该文件</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="21"/>
        <source>{shard} holds tensors that {index} does not map to it (loaders never read them): {n}</source>
        <translation>{shard} 中有 {index} 未映射到它的张量（加载器永远不会读取）：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="25"/>
        <source>{shard} holds tensors that {index} does not map to it (loaders never read them): {n}, {m} of them mapped to another shard</source>
        <translation>{shard} 中有 {index} 未映射到它的张量（加载器永远不会读取）：{n}，其中 {m} 个被映射到其他分片</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="29"/>
        <source>{index} maps tensors to {shard} that it does not hold: {n}</source>
        <translation>{index} 将 {shard} 中并不存在的张量映射到该分片：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="30"/>
        <source>{index} says total_size {claimed} bytes; its shards hold {total}</source>
        <translation>{index} 声明 total_size 为 {claimed} 字节；分片实际为 {total}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="33"/>
        <source>{name} is not used by any index (a pickle copy beside safetensors: a loader downloads both)</source>
        <translation>{name} 未被任何索引使用（safetensors 旁的 pickle 副本：加载器会把两者都下载）</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="37"/>
        <source>{name} is not used by any index (a loader may pick it up instead of the shards)</source>
        <translation>{name} 未被任何索引使用（加载器可能会用它代替分片）</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="41"/>
        <source>{name} beside {weights}: a pickle copy of the weights (bytes downloaded twice)</source>
        <translation>{name} 与 {weights} 并存：权重的 pickle 副本（同样的数据下载两次）</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="45"/>
        <source>Names that repeat a part ({part}), as a save that added a prefix twice makes them (the model will not find them): {n}</source>
        <translation>名称中重复了一段（{part}），像是保存时前缀被加了两次（模型将找不到这些张量）：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="49"/>
        <source>{n} tensors hold identical bytes ({wasted} bytes stored again): tied weights saved twice?</source>
        <translation>{n} 个张量的字节完全相同（重复存储了 {wasted} 字节）：绑定的权重被保存了两次？</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="53"/>
        <source>{config}, but {n} of {floats} float tensors are {kinds}: transformers&apos; from_pretrained loads them as {dtype} (the config wins, a silent cast), while burn and safe_open keep {kinds} (the file is not what the model uses; burn&apos;s first {dtype} matmul panics on the mismatch)</source>
        <translation>{config}，但 {floats} 个浮点张量中有 {n} 个是 {kinds}：transformers 的 from_pretrained 会按 {dtype} 加载（以配置为准，静默转换），而 burn 和 safe_open 保持 {kinds}（文件与模型实际使用的不一致；burn 的第一次 {dtype} matmul 会因不匹配而 panic）</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="57"/>
        <source>Tensors that hold NaN or ±inf values: {n}</source>
        <translation>含有 NaN 或 ±inf 值的张量：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="58"/>
        <source>Tensors look like {scheme} ({n} weights), but no config.json quantization_config confirms it: a loader reads their codes as values</source>
        <translation>张量看起来是 {scheme}（{n} 个权重），但没有 config.json 的 quantization_config 可以确认：加载器会把其编码当作数值读取</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="62"/>
        <source>Quantized tensors that do not fit {scheme}: {n}; the first: {problem}</source>
        <translation>与 {scheme} 不符的量化张量：{n}；第一个：{problem}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="65"/>
        <source>quantization_config names modules the checkpoint does not have: {entries}</source>
        <translation>quantization_config 列出了检查点中不存在的模块：{entries}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="68"/>
        <source>Scales stored in another dtype than the config says: {n}; the first: {note}</source>
        <translation>缩放因子的存储 dtype 与配置不符：{n}；第一个：{note}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="72"/>
        <source>Quantized weights with a scale that is 0, negative, inf or NaN: {n}</source>
        <translation>缩放因子为 0、负数、inf 或 NaN 的量化权重：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="75"/>
        <source>FP8 weights that hold NaN codes: {n}</source>
        <translation>含有 NaN 编码的 FP8 权重：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="76"/>
        <source>Shards far from the series&apos; typical size of {size}: {n}</source>
        <translation>大小远离该系列典型大小 {size} 的分片：{n}</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="77"/>
        <source>{name} is not a weights file, and it imports {imports}: torch.load(weights_only=False) of it would run them (nothing was run here)</source>
        <translation>{name} 不是权重文件，它导入了 {imports}：torch.load(weights_only=False) 会执行它们（此处未执行任何内容）</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="81"/>
        <source>{name} imports {imports}, kept as inert placeholders here (nothing was run): torch.load(weights_only=True) refuses it, and weights_only=False would run them</source>
        <translation>{name} 导入了 {imports}，这里仅保留为惰性占位符（未运行任何代码）：torch.load(weights_only=True) 会拒绝它，而 weights_only=False 会运行它们</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="100"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="101"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location filename="../lint_texts.py" line="102"/>
        <source>info</source>
        <translation>提示</translation>
    </message>
</context>
<context>
    <name>LintPanel</name>
    <message>
        <location filename="../lint_panel.py" line="21"/>
        <source>severity</source>
        <translation>严重程度</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="21"/>
        <source>finding</source>
        <translation>发现</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="32"/>
        <source>&lt;b&gt;{folder}&lt;/b&gt;: no findings (index, shards, names, config).</source>
        <translation>&lt;b&gt;{folder}&lt;/b&gt;：没有发现问题（索引、分片、名称、配置）。</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="38"/>
        <source>&lt;b&gt;1 finding in {folder}&lt;/b&gt; (as checkpoint-inspector lint)</source>
        <translation>&lt;b&gt;{folder} 中有 1 个问题&lt;/b&gt;（同 checkpoint-inspector lint）</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="40"/>
        <source>&lt;b&gt;{n} findings in {folder}&lt;/b&gt; (as checkpoint-inspector lint)</source>
        <translation>&lt;b&gt;{folder} 中有 {n} 个问题&lt;/b&gt;（同 checkpoint-inspector lint）</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="51"/>
        <source>tensor {name}</source>
        <translation>张量 {name}</translation>
    </message>
    <message>
        <location filename="../lint_panel.py" line="55"/>
        <source>file {name}</source>
        <translation>文件 {name}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main_window.py" line="85"/>
        <source>Checkpoint Inspector</source>
        <translation>Checkpoint Inspector</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="323"/>
        <source>Open checkpoint</source>
        <translation>打开 checkpoint</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="328"/>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="335"/>
        <source>Open a checkpoint first, then compare it with a reference.</source>
        <translation>请先打开一个 checkpoint，再与参考文件对比。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="340"/>
        <source>Open reference checkpoint</source>
        <translation>打开参考 checkpoint</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="352"/>
        <source>Drop to open · hold Shift to compare with it as reference</source>
        <translation>松开即可打开 · 按住 Shift 则作为参考进行对比</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="367"/>
        <source>Only local files and folders can be opened (that was a remote URL).</source>
        <translation>只能打开本地文件和文件夹（拖入的是远程 URL）。</translation>
    </message>
</context>
<context>
    <name>MessageBar</name>
    <message>
        <location filename="../message_bar.py" line="69"/>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>MetadataPanel</name>
    <message>
        <location filename="../metadata_panel.py" line="24"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="24"/>
        <source>value</source>
        <translation>值</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="44"/>
        <source>the GGUF file&apos;s &lt;b&gt;key/values&lt;/b&gt;</source>
        <translation>GGUF 文件的 &lt;b&gt;键/值&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="46"/>
        <source>the Burnpack file&apos;s &lt;b&gt;metadata&lt;/b&gt; and scalars</source>
        <translation>Burnpack 文件的 &lt;b&gt;metadata&lt;/b&gt; 与标量</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="48"/>
        <source>the index&apos;s &lt;b&gt;metadata&lt;/b&gt;</source>
        <translation>索引的 &lt;b&gt;metadata&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="50"/>
        <source>the file&apos;s &lt;b&gt;__metadata__&lt;/b&gt;</source>
        <translation>文件的 &lt;b&gt;__metadata__&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="52"/>
        <source>{name} (scalar)</source>
        <translation>{name}（标量）</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="57"/>
        <source>{what}: 1 entry, as saved (a cast does not carry it).</source>
        <translation>{what}：1 项，按保存时显示（转换不会保留它）。</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="59"/>
        <source>{what}: {n} entries, as saved (a cast does not carry them).</source>
        <translation>{what}：{n} 项，按保存时显示（转换不会保留它们）。</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="65"/>
        <source>{what}: 1 entry, as saved (cast keeps it).</source>
        <translation>{what}：1 项，与保存时相同（转换会保留）。</translation>
    </message>
    <message>
        <location filename="../metadata_panel.py" line="67"/>
        <source>{what}: {n} entries, as saved (cast keeps them).</source>
        <translation>{what}：{n} 项，与保存时相同（转换会保留）。</translation>
    </message>
</context>
<context>
    <name>ModuleTree</name>
    <message>
        <location filename="../module_tree.py" line="61"/>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <location filename="../module_tree.py" line="62"/>
        <source>Tensors under this module</source>
        <translation>此模块下的张量数</translation>
    </message>
    <message>
        <location filename="../module_tree.py" line="64"/>
        <source>Tensors whose dtype differs from the model dtype</source>
        <translation>dtype 与模型 dtype 不一致的张量数</translation>
    </message>
    <message>
        <location filename="../module_tree.py" line="74"/>
        <source>Modules</source>
        <translation>模块</translation>
    </message>
    <message>
        <location filename="../module_tree.py" line="91"/>
        <source>(all tensors)</source>
        <translation>（全部张量）</translation>
    </message>
</context>
<context>
    <name>PicklePanel</name>
    <message>
        <location filename="../pickle_panel.py" line="24"/>
        <source>torch tensor machinery</source>
        <translation>torch 张量重建</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="25"/>
        <source>plain container</source>
        <translation>普通容器</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="26"/>
        <source>tensor kind not readable here</source>
        <translation>本工具无法读取的张量类型</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="27"/>
        <source>unknown, not executed</source>
        <translation>未知，未执行</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="34"/>
        <source>name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="34"/>
        <source>what it is</source>
        <translation>含义</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="45"/>
        <source>&lt;b&gt;PyTorch pickle ({format})&lt;/b&gt;, read opcode by opcode: nothing in it was executed. It imports {n} unknown objects, kept as inert placeholders: torch.load(weights_only=True) refuses this file.</source>
        <translation>&lt;b&gt;PyTorch pickle（{format}）&lt;/b&gt;，逐条操作码读取：其中没有任何内容被执行。它导入了 {n} 个未知对象，仅保留为惰性占位符：torch.load(weights_only=True) 会拒绝此文件。</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="52"/>
        <source>&lt;b&gt;PyTorch pickle ({format})&lt;/b&gt;, read opcode by opcode: nothing in it was executed. It imports only torch&apos;s tensor machinery and plain containers.</source>
        <translation>&lt;b&gt;PyTorch pickle（{format}）&lt;/b&gt;，逐条操作码解读：其中的任何内容都未被执行。它只导入 torch 的张量机制和普通容器。</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="59"/>
        <source>Pickle imports ({n})</source>
        <translation>Pickle 导入（{n}）</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="70"/>
        <source>Values that are not tensors ({n}), not written by cast</source>
        <translation>非张量的值（{n}），转换时不写出</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="90"/>
        <source>Unknown objects not executed: {names}; kept as inert placeholders (see the Pickle tab). torch.load(weights_only=True) refuses this file.</source>
        <translation>未执行的未知对象：{names}；仅保留为惰性占位符（见 Pickle 标签页）。torch.load(weights_only=True) 会拒绝此文件。</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="98"/>
        <source>1 tensor whose rebuild needs them was not read.</source>
        <translation>1 个需要它们才能重建的张量未被读取。</translation>
    </message>
    <message>
        <location filename="../pickle_panel.py" line="100"/>
        <source>{n} tensors whose rebuild needs them were not read.</source>
        <translation>{n} 个需要它们才能重建的张量未被读取。</translation>
    </message>
</context>
<context>
    <name>PlotTabs</name>
    <message>
        <location filename="../plot_tabs.py" line="53"/>
        <source>Relative error per tensor</source>
        <translation>每个张量的相对误差</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="54"/>
        <location filename="../plot_tabs.py" line="95"/>
        <source>max ●, mean ■</source>
        <translation>最大 ●，均值 ■</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="55"/>
        <source>lossless</source>
        <translation>无损</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="55"/>
        <source>max (largest)</source>
        <translation>最大值</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="58"/>
        <source>Max |Δ| per tensor vs reference</source>
        <translation>每个张量与参考的最大 |Δ|</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="60"/>
        <source>differs</source>
        <translation>有差异</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="60"/>
        <source>equal</source>
        <translation>相同</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="66"/>
        <source>Why it matters</source>
        <translation>为什么重要</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="67"/>
        <source>Precision lost (cast)</source>
        <translation>精度损失（转换）</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="69"/>
        <source>Difference to reference</source>
        <translation>与参考的差异</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="71"/>
        <source>Pickle</source>
        <translation>Pickle</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="73"/>
        <location filename="../plot_tabs.py" line="244"/>
        <source>Lint</source>
        <translation>检查</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="75"/>
        <source>Metadata</source>
        <translation>元数据</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="107"/>
        <source>Relative error per tensor, cast to {target}: largest and typical</source>
        <translation>每个张量转换为 {target} 的相对误差：最大与典型</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="116"/>
        <source>&lt;b&gt;1 tensor cast to {target}&lt;/b&gt; ({out}): {lossless} lossless · overflow {o} · underflow {u} · NaN {nan}</source>
        <translation>&lt;b&gt;1 个张量转换为 {target}&lt;/b&gt;（{out}）：{lossless} 个无损 · 上溢 {o} · 下溢 {u} · NaN {nan}</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="122"/>
        <source>&lt;b&gt;{n} tensors cast to {target}&lt;/b&gt; ({out}): {lossless} lossless · overflow {o} · underflow {u} · NaN {nan}</source>
        <translation>&lt;b&gt;{n} 个张量转换为 {target}&lt;/b&gt;（{out}）：{lossless} 个无损 · 上溢 {o} · 下溢 {u} · NaN {nan}</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="150"/>
        <source>Precision lost ({scheme} preview)</source>
        <translation>精度损失（{scheme} 预览）</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="155"/>
        <source>{scheme}: relative Frobenius error per weight (preview)</source>
        <translation>{scheme}：每个权重的相对 Frobenius 误差（预览）</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="164"/>
        <source>&lt;b&gt;{scheme} would write {size} ({ratio} of the source)&lt;/b&gt;: SQNR median {median}, worst {worst} ({name}) · 1 weight quantized, {skipped} left as they are</source>
        <translation>&lt;b&gt;{scheme} 将写出 {size}（源文件的 {ratio}）&lt;/b&gt;：SQNR 中位数 {median}，最差 {worst}（{name}）· 量化 1 个权重，{skipped} 个保持不变</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="171"/>
        <source>&lt;b&gt;{scheme} would write {size} ({ratio} of the source)&lt;/b&gt;: SQNR median {median}, worst {worst} ({name}) · {n} weights quantized, {skipped} left as they are</source>
        <translation>&lt;b&gt;{scheme} 将写出 {size}（源文件的 {ratio}）&lt;/b&gt;：SQNR 中位数 {median}，最差 {worst}（{name}）· 量化 {n} 个权重，{skipped} 个保持不变</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="200"/>
        <source>Relative Frobenius error of the dequantized weights vs {ref}</source>
        <translation>反量化权重相对 {ref} 的 Frobenius 相对误差</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="209"/>
        <source>Max |Δ| per tensor vs {ref}</source>
        <translation>每个张量与 {ref} 的最大 |Δ|</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="212"/>
        <source>&lt;b&gt;{n} differing from {ref}&lt;/b&gt; (worst max |Δ| {worst}), {equal} equal</source>
        <translation>&lt;b&gt;{n} 个张量与 {ref} 有差异&lt;/b&gt;（最大 |Δ| 为 {worst}），{equal} 个相同</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="222"/>
        <source>, {n} within tolerance</source>
        <translation>，{n} 个在容差内</translation>
    </message>
    <message>
        <location filename="../plot_tabs.py" line="242"/>
        <source>Lint ({n})</source>
        <translation>检查（{n}）</translation>
    </message>
</context>
<context>
    <name>Plots</name>
    <message>
        <location filename="../plots.py" line="139"/>
        <source>Values</source>
        <translation>数值</translation>
    </message>
    <message>
        <location filename="../plots.py" line="156"/>
        <location filename="../plots.py" line="215"/>
        <source>count</source>
        <translation>个数</translation>
    </message>
    <message>
        <location filename="../plots.py" line="205"/>
        <source>Relative error</source>
        <translation>相对误差</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="41"/>
        <source>x: tensor # in file order (click a point to select it)</source>
        <translation>x：按文件顺序的张量序号（点击某点可选中该张量）</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="98"/>
        <source>↑ overflow, inf or NaN</source>
        <translation>↑ 溢出、inf 或 NaN</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="104"/>
        <source>↓ exact (0)</source>
        <translation>↓ 完全一致 (0)</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="124"/>
        <source>overflow, inf or NaN (top band)</source>
        <translation>上溢、inf 或 NaN（顶部区域）</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="127"/>
        <source>(exactly 0: bottom band)</source>
        <translation>（误差恰为 0：底部区域）</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="134"/>
        <source>typical (mean)</source>
        <translation>典型（均值）</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="138"/>
        <source>max 1 from an underflow</source>
        <translation>因下溢导致最大值为 1</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="211"/>
        <source>overflow</source>
        <translation>溢出</translation>
    </message>
    <message>
        <location filename="../overview_plot.py" line="213"/>
        <source>exact 0</source>
        <translation>误差为 0</translation>
    </message>
</context>
<context>
    <name>QuantizeController</name>
    <message>
        <location filename="../quantize_controller.py" line="82"/>
        <source>Measuring six quantization schemes</source>
        <translation>正在测量六种量化方案</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="107"/>
        <source>Measuring cancelled.</source>
        <translation>测量已取消。</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="138"/>
        <source>Another checkpoint is shown now; nothing was written. Open Quantize… again.</source>
        <translation>当前显示的已是另一个 checkpoint；没有写入任何文件。请重新打开“量化…”。</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="148"/>
        <source>Quantizing to {scheme}</source>
        <translation>正在量化为 {scheme}</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="154"/>
        <source>Quantize cancelled: nothing was written.</source>
        <translation>量化已取消：没有写入任何文件。</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="162"/>
        <source>Saved {name} in {secs} s: 1 weight quantized with {scheme}, {size}.</source>
        <translation>已保存 {name}，用时 {secs} 秒：1 个权重以 {scheme} 量化，{size}。</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="167"/>
        <source>Saved {name} in {secs} s: {n} weights quantized with {scheme}, {size}.</source>
        <translation>已保存 {name}，用时 {secs} 秒：{n} 个权重以 {scheme} 量化，{size}。</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="179"/>
        <source>Open the saved model</source>
        <translation>打开保存的模型</translation>
    </message>
    <message>
        <location filename="../quantize_controller.py" line="187"/>
        <source>Quantize failed, nothing was written: {what}</source>
        <translation>量化失败，没有写入任何文件：{what}</translation>
    </message>
</context>
<context>
    <name>QuantizeDialog</name>
    <message>
        <location filename="../quantize_dialog.py" line="59"/>
        <source>lossless</source>
        <translation>无损</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="70"/>
        <source>Quantize</source>
        <translation>量化</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="76"/>
        <source>Data-free quantization of the Linear weights with llm-compressor&apos;s presets, written as compressed-tensors (vLLM and transformers load it). The precision each scheme loses is measured first; nothing is written until you save.</source>
        <translation>使用 llm-compressor 的预设对 Linear 权重做无数据量化，写成 compressed-tensors 格式（vLLM 和 transformers 可加载）。先测量每种方案损失的精度；保存之前不会写入任何文件。</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="86"/>
        <source>Scheme</source>
        <translation>方案</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="87"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="88"/>
        <source>Median SQNR</source>
        <translation>SQNR 中位数</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="89"/>
        <source>Worst SQNR</source>
        <translation>最差 SQNR</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="90"/>
        <source>Worst weights (SQNR)</source>
        <translation>最差的权重（SQNR）</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="114"/>
        <source>Linear modules left as they are: names, globs (model.layers.0.*) or re:regex</source>
        <translation>保持不变的 Linear 模块：名称、通配符（model.layers.0.*）或 re:正则表达式</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="122"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="127"/>
        <source>Leave as they are:</source>
        <translation>保持不变：</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="128"/>
        <source>Save into folder:</source>
        <translation>保存到文件夹：</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="132"/>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="158"/>
        <source>Measuring the six schemes… (progress below)</source>
        <translation>正在测量六种方案…（进度见下方）</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="198"/>
        <source>1 Linear weight measured, {skipped} left as they are; source {size}. Click a scheme to see its error per weight in the precision tab.</source>
        <translation>已测量 1 个 Linear 权重，{skipped} 个保持不变；源文件 {size}。点击某个方案，可在精度标签页查看其每个权重的误差。</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="204"/>
        <source>{n} Linear weights measured, {skipped} left as they are; source {size}. Click a scheme to see its error per weight in the precision tab.</source>
        <translation>已测量 {n} 个 Linear 权重，{skipped} 个保持不变；源文件 {size}。点击某个方案，可在精度标签页查看其每个权重的误差。</translation>
    </message>
    <message>
        <location filename="../quantize_dialog.py" line="258"/>
        <source>Save the quantized model into folder</source>
        <translation>把量化后的模型保存到文件夹</translation>
    </message>
</context>
<context>
    <name>TableColumns</name>
    <message>
        <location filename="../table_columns.py" line="112"/>
        <source>{column} (no room at this width)</source>
        <translation>{column}（此宽度下放不下）</translation>
    </message>
</context>
<context>
    <name>TableText</name>
    <message>
        <location filename="../table_text.py" line="28"/>
        <source>[] (scalar)</source>
        <translation>[]（标量）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="36"/>
        <source>0 (lossless)</source>
        <translation>0（无损）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="58"/>
        <source>Relative error: largest {max}, typical (mean) {mean}, RMS {rms}
overflow {o} · underflow {u} (non-zero values that became 0: an error of 1 each)</source>
        <translation>相对误差：最大 {max}，典型（均值）{mean}，RMS {rms}
溢出 {o} · 下溢 {u}（变为 0 的非零值：每个误差为 1）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="77"/>
        <source>not a float</source>
        <translation>非浮点</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="79"/>
        <source>quantized</source>
        <translation>已量化</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="86"/>
        <source>differs: {dtype} → {target}</source>
        <translation>不一致：{dtype} → {target}</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="90"/>
        <source>kept (not a float)</source>
        <translation>保持不变（非浮点）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="93"/>
        <source>quantized: a cast is refused</source>
        <translation>已量化：转换会被拒绝</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="94"/>
        <source>quantized: a cast dequantizes it</source>
        <translation>已量化：转换时会反量化</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="95"/>
        <source>matches {target}</source>
        <translation>与 {target} 一致</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="137"/>
        <source>{n} of {total} tensors differ from {target}</source>
        <translation>{total} 个张量中有 {n} 个与 {target} 不一致</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="143"/>
        <source>{n} quantized ({scheme})</source>
        <translation>{n} 个已量化（{scheme}）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="148"/>
        <source>{n} params</source>
        <translation>{n} 参数</translation>
    </message>
</context>
<context>
    <name>TensorPage</name>
    <message>
        <location filename="../tensor_page.py" line="71"/>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="118"/>
        <source>Filter (Ctrl+F): any of these words or globs, e.g. embed lm_head *.bias · Esc clears</source>
        <translation>筛选 (Ctrl+F)：匹配任一关键词或通配符，例如 embed lm_head *.bias · Esc 清空</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="124"/>
        <source>Filter tensor names</source>
        <translation>按名称筛选张量</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="131"/>
        <source>Only differing</source>
        <translation>仅不一致</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="133"/>
        <source>Show only float tensors whose dtype differs from the model dtype</source>
        <translation>只显示 dtype 与模型 dtype 不一致的浮点张量</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="138"/>
        <source>Show scales</source>
        <translation>显示缩放因子</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="140"/>
        <source>Show each quantized weight&apos;s scales, zero points and shapes as rows of their own</source>
        <translation>把每个量化权重的缩放因子、零点和形状各显示为一行</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="176"/>
        <source>Copy Tensor Name</source>
        <translation>复制张量名称</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="196"/>
        <source>no tensor matches</source>
        <translation>没有匹配的张量</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="198"/>
        <source>{shown} of {total}</source>
        <translation>{total} 个中的 {shown} 个</translation>
    </message>
    <message>
        <location filename="../tensor_page.py" line="202"/>
        <source>{total} tensors</source>
        <translation>{total} 个张量</translation>
    </message>
</context>
<context>
    <name>TensorTable</name>
    <message>
        <location filename="../tensor_columns.py" line="26"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="27"/>
        <source>DType</source>
        <translation>dtype</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="28"/>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="29"/>
        <source>Params</source>
        <translation>参数量</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="30"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="31"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="32"/>
        <source>Rel. error</source>
        <translation>相对误差</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="33"/>
        <source>|Δ| vs ref</source>
        <translation>与参考的 |Δ|</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="36"/>
        <source>Whether the tensor&apos;s dtype matches the target dtype. Integer and bool tensors are kept as they are (FloatCastAdapter only casts floats).</source>
        <translation>张量的 dtype 是否与目标 dtype 一致。整数和布尔张量保持不变（FloatCastAdapter 只转换浮点张量）。</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="41"/>
        <source>Largest relative error between the original and the saved value (float64); — means the tensor was written unchanged</source>
        <translation>原始值与保存值之间的最大相对误差（float64）；— 表示该张量按原样写入</translation>
    </message>
    <message>
        <location filename="../tensor_columns.py" line="46"/>
        <source>Largest absolute difference to the reference checkpoint (float64)</source>
        <translation>与参考 checkpoint 的最大绝对差（float64）</translation>
    </message>
    <message>
        <location filename="../tensor_table.py" line="255"/>
        <source>Name in {module}</source>
        <translation>{module} 中的名称</translation>
    </message>
    <message>
        <location filename="../tensor_table.py" line="289"/>
        <source>on purpose?</source>
        <translation>有意为之？</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="20"/>
        <source>shape mismatch</source>
        <translation>形状不一致</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="21"/>
        <source>not in reference</source>
        <translation>参考中没有</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="22"/>
        <source>only in reference</source>
        <translation>只在参考中</translation>
    </message>
    <message>
        <location filename="../tensor_cells.py" line="52"/>
        <source>0 (lossless)</source>
        <translation>0（无损）</translation>
    </message>
    <message>
        <location filename="../tensor_cells.py" line="54"/>
        <source>{n} NaN</source>
        <translation>{n} 个 NaN</translation>
    </message>
    <message>
        <location filename="../tensor_cells.py" line="56"/>
        <source>{n} overflow</source>
        <translation>{n} 个溢出</translation>
    </message>
    <message>
        <location filename="../tensor_cells.py" line="58"/>
        <source>{n} underflow</source>
        <translation>{n} 个下溢</translation>
    </message>
    <message>
        <location filename="../tensor_cells.py" line="67"/>
        <source>0 (equal)</source>
        <translation>0（相同）</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="100"/>
        <source>Stored as {dtype}, the model uses {target}. PyTorch&apos;s load_state_dict casts it silently; burn-store keeps {dtype} and fails with a dtype mismatch.</source>
        <translation>文件中存为 {dtype}，模型使用 {target}。PyTorch 的 load_state_dict 会静默转换；burn-store 会保留 {dtype}，并因 dtype 不匹配而报错。</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="106"/>
        <source>{dtype} is not a float type: casting leaves it unchanged.</source>
        <translation>{dtype} 不是浮点类型：转换时保持不变。</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="110"/>
        <source>Codes or scales of a quantized weight, stored so on purpose. A cast is refused, so nothing writes them as values: {why}</source>
        <translation>量化权重的编码或缩放因子，有意如此存储。转换会被拒绝，因此不会把它们当作数值写出：{why}</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="116"/>
        <source>Codes or scales of a quantized weight, stored so on purpose. A cast dequantizes the weight to {target} and leaves its scales out; casting the codes as values would corrupt it.</source>
        <translation>量化权重的编码或缩放因子，有意如此存储。转换会把该权重反量化为 {target} 并丢弃缩放因子；把编码当作数值转换会损坏模型。</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="122"/>
        <source>Already {target}.</source>
        <translation>已经是 {target}。</translation>
    </message>
    <message>
        <location filename="../table_text.py" line="126"/>
        <source>F32 in a {target} model: norms, rotary inv_freq and MoE routers are often kept in F32 on purpose. Casting them loses precision the model wants; keep them with the fp32-norms globs (cast dialog, or --keep-preset).</source>
        <translation>{target} 模型中的 F32：归一化层、旋转位置编码 inv_freq 和 MoE 路由常被有意保持为 F32。转换它们会损失模型所需的精度；可用 fp32-norms 模式保留（转换对话框，或 --keep-preset）。</translation>
    </message>
    <message>
        <location filename="../quant_rows.py" line="55"/>
        <source>{name}
stored as {codes} ({storage}), with: {companions}</source>
        <translation>{name}
存储为 {codes}（{storage}），附带：{companions}</translation>
    </message>
</context>
<context>
    <name>ValuesController</name>
    <message>
        <location filename="../values_controller.py" line="60"/>
        <location filename="../values_controller.py" line="76"/>
        <source>computing…</source>
        <translation>计算中…</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="120"/>
        <location filename="../values_controller.py" line="136"/>
        <source>No values</source>
        <translation>没有数值</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="126"/>
        <source>Values unavailable: {why}</source>
        <translation>数值不可用：{why}</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="144"/>
        <source>Heatmap unavailable: {why}</source>
        <translation>热力图不可用：{why}</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="154"/>
        <source>{rows} × {cols} values</source>
        <translation>{rows} × {cols} 个值</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="158"/>
        <source>{rows} × {cols} in {r} × {c} cells</source>
        <translation>{rows} × {cols}，分为 {r} × {c} 个格子</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="162"/>
        <source>, dequantized</source>
        <translation>，已反量化</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="165"/>
        <source> · colours saturate beyond ±{m} (a few cells reach {top})</source>
        <translation> · 超出 ±{m} 的颜色饱和（少数格子达到 {top}）</translation>
    </message>
    <message>
        <location filename="../values_controller.py" line="170"/>
        <source> · {n} NaN or inf not drawn (grey: a block of nothing else)</source>
        <translation> · {n} 个 NaN 或 inf 未绘制（灰色：区块中只有这些值）</translation>
    </message>
</context>
<context>
    <name>ValuesView</name>
    <message>
        <location filename="../value_grid.py" line="113"/>
        <source>First row shown</source>
        <translation>显示的第一行</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="114"/>
        <source>First column shown</source>
        <translation>显示的第一列</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="115"/>
        <source>row</source>
        <translation>行</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="116"/>
        <source>col</source>
        <translation>列</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="161"/>
        <source>Index along a leading dimension</source>
        <translation>前导维度上的索引</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="178"/>
        <source>reading…</source>
        <translation>读取中…</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="203"/>
        <source>rows {r0}–{r1} of {rows}, columns {c0}–{c1} of {cols}</source>
        <translation>第 {r0}–{r1} 行（共 {rows} 行），第 {c0}–{c1} 列（共 {cols} 列）</translation>
    </message>
    <message>
        <location filename="../value_grid.py" line="213"/>
        <source> · dequantized values</source>
        <translation> · 反量化后的数值</translation>
    </message>
</context>
</TS>
